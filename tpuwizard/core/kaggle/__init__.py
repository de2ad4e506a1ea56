"""The Kaggle route: a script run as a private Kaggle kernel on Kaggle's TPU, and proven."""
