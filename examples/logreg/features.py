"""Feature helpers shared by training and evaluation.

No stage lists this file among its deps: train and evaluate import it, so it is in
their read sets, and an edit here re-runs both.
"""
import csv
import math


def load(path, split):
    """Rows of one split as (features, label), features with a bias term first."""
    rows = []
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle):
            if row["split"] == split:
                rows.append(([1.0, float(row["x1"]), float(row["x2"])], int(row["label"])))
    return rows


def sigmoid(z):
    if z < -60:
        return 0.0
    return 1.0 / (1.0 + math.exp(-z))


def predict(weights, features):
    return sigmoid(sum(w * x for w, x in zip(weights, features)))
