"""Prediction-powered inference (PPI++) on a study's human means: the estimators (mean), active inclusion
probabilities with the inverse-probability-weighted estimator (active), and the human-budget planner (plan)."""
