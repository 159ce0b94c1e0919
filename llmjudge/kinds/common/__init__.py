"""What the judge kinds share: prompt data loading, option checking, item texts, planning and steps."""
