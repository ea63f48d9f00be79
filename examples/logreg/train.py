"""Trains logistic regression by full-batch gradient descent.

Prints a `::metric name=loss::` line every epoch (fluksio keeps the series and draws
it), and writes the model and the final training metrics.
"""
import argparse
import json
import math
import os

from features import load, predict


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", required=True)
    parser.add_argument("--lr", type=float, required=True)
    parser.add_argument("--epochs", type=int, required=True)
    parser.add_argument("--model", required=True)
    args = parser.parse_args()

    rows = load(args.data, "train")
    weights = [0.0, 0.0, 0.0]
    loss = math.inf
    for epoch in range(args.epochs):
        gradient = [0.0, 0.0, 0.0]
        loss = 0.0
        for features, label in rows:
            p = predict(weights, features)
            p = min(max(p, 1e-12), 1 - 1e-12)
            loss -= label * math.log(p) + (1 - label) * math.log(1 - p)
            for i, x in enumerate(features):
                gradient[i] += (p - label) * x
        loss /= len(rows)
        weights = [w - args.lr * g / len(rows) for w, g in zip(weights, gradient)]
        print(f"::metric name=loss,step={epoch}::{loss:.6f}", flush=True)

    correct = sum((predict(weights, f) >= 0.5) == bool(y) for f, y in rows)
    with open(args.model, "w") as handle:
        json.dump({"weights": weights}, handle)
    os.makedirs("metrics", exist_ok=True)
    with open("metrics/train.json", "w") as handle:
        json.dump({"loss": round(loss, 6), "train_accuracy": round(correct / len(rows), 6)}, handle)
    print(f"trained on {len(rows)} rows: loss {loss:.4f}")


if __name__ == "__main__":
    main()
