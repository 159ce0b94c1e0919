"""The plain protocol judge: the study's own prompt, one query per question (or one chat per item)."""
