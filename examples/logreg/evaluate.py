"""Scores the model on the held-out rows and writes metrics/eval.json."""
import argparse
import json
import os

from features import load, predict


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", required=True)
    parser.add_argument("--model", required=True)
    args = parser.parse_args()
    with open(args.model) as handle:
        weights = json.load(handle)["weights"]
    rows = load(args.data, "test")
    correct = sum((predict(weights, f) >= 0.5) == bool(y) for f, y in rows)
    accuracy = correct / len(rows)
    os.makedirs("metrics", exist_ok=True)
    with open("metrics/eval.json", "w") as handle:
        json.dump({"accuracy": round(accuracy, 6), "test_rows": len(rows)}, handle)
    print(f"accuracy {accuracy:.4f} on {len(rows)} held-out rows")


if __name__ == "__main__":
    main()
