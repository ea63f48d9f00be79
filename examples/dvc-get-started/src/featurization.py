"""Bag of n-grams over the most frequent terms: data/features/{train,test}.json (stdlib only)."""
import argparse
import collections
import json
import os

parser = argparse.ArgumentParser()
parser.add_argument("prepared")
parser.add_argument("features")
parser.add_argument("--max_features", type=int, required=True)
parser.add_argument("--ngrams", type=int, required=True)
args = parser.parse_args()


def grams(text):
    words = text.lower().split()
    return [" ".join(words[i : i + n]) for n in range(1, args.ngrams + 1) for i in range(len(words) - n + 1)]


def read(name):
    with open(os.path.join(args.prepared, name)) as rows:
        return [(int(label), grams(text)) for _, label, text in (line.rstrip("\n").split("\t") for line in rows)]


train, test = read("train.tsv"), read("test.tsv")
counts = collections.Counter(gram for _, terms in train for gram in terms)
vocabulary = [gram for gram, _ in counts.most_common(args.max_features)]
index = {gram: i for i, gram in enumerate(vocabulary)}
os.makedirs(args.features, exist_ok=True)
for name, rows in (("train", train), ("test", test)):
    vectors = [[label, sorted({index[g] for g in terms if g in index})] for label, terms in rows]
    with open(os.path.join(args.features, f"{name}.json"), "w") as out:
        json.dump({"vocabulary": len(vocabulary), "rows": vectors}, out)
