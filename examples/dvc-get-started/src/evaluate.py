"""Scores the test rows: eval/metrics.json (avg_prec, roc_auc) and ROC/PRC plot files (stdlib only)."""
import json
import os
import sys

model_path, features = sys.argv[1], sys.argv[2]
with open(model_path) as source:
    stumps = json.load(source)["stumps"]
with open(os.path.join(features, "test.json")) as source:
    rows = json.load(source)["rows"]


def score(terms):
    if not stumps:
        return 0.5
    return sum(inside if feature in terms else outside for feature, inside, outside in stumps) / len(stumps)


scored = sorted(((score(set(terms)), label) for label, terms in rows), reverse=True)
positives = sum(label for _, label in scored) or 1
negatives = (len(scored) - sum(label for _, label in scored)) or 1
roc, prc, tp, fp, auc, precisions = [], [], 0, 0, 0.0, []
for threshold, label in scored:
    if label:
        tp += 1
        precisions.append(tp / (tp + fp))
    else:
        fp += 1
        auc += tp / positives
    roc.append({"fpr": fp / negatives, "tpr": tp / positives, "threshold": threshold})
    prc.append({"precision": tp / (tp + fp), "recall": tp / positives, "threshold": threshold})
os.makedirs("eval/plots", exist_ok=True)
with open("eval/metrics.json", "w") as out:
    json.dump({"avg_prec": sum(precisions) / positives, "roc_auc": auc / negatives}, out, indent=2)
with open("eval/plots/roc.json", "w") as out:
    json.dump({"roc": roc}, out)
with open("eval/plots/prc.json", "w") as out:
    json.dump({"prc": prc}, out)
