"""Makes the dataset: two overlapping Gaussian clouds, split into train and test rows.

Deterministic for a given --seed and --samples, so the stage's cache key (this file,
the params) fully describes its output.
"""
import argparse
import csv
import os
import random


def make_rows(seed, samples):
    rng = random.Random(seed)
    rows = []
    for index in range(samples):
        label = index % 2
        centre = (1.0, 0.5) if label else (-1.0, -0.5)
        x1 = rng.gauss(centre[0], 1.2)
        x2 = rng.gauss(centre[1], 1.0)
        split = "test" if rng.random() < 0.25 else "train"
        rows.append((split, round(x1, 6), round(x2, 6), label))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--samples", type=int, required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    rows = make_rows(args.seed, args.samples)
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["split", "x1", "x2", "label"])
        writer.writerows(rows)
    print(f"wrote {len(rows)} rows to {args.out}")


if __name__ == "__main__":
    main()
