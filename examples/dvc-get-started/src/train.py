"""A forest of n_est random decision stumps, each split kept if it covers min_split of the rows (stdlib only)."""
import json
import os
import random
import sys

features, model_path, seed, n_est, min_split = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
random.seed(seed)
with open(os.path.join(features, "train.json")) as source:
    data = json.load(source)
rows, width = data["rows"], max(data["vocabulary"], 1)
stumps = []
for _ in range(n_est):
    sample = [random.choice(rows) for _ in rows] or [[0, []]]
    feature = random.randrange(width)
    having = [label for label, terms in sample if feature in terms]
    if len(having) < min_split * len(sample) or not having:
        continue
    others = [label for label, terms in sample if feature not in terms] or [0]
    stumps.append([feature, sum(having) / len(having), sum(others) / len(others)])
with open(model_path, "w") as out:
    json.dump({"stumps": stumps}, out)
