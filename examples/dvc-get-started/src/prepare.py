"""Splits the posts of data.xml into train and test TSV files (stdlib only)."""
import os
import random
import sys
import xml.etree.ElementTree as ET

source, split, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
random.seed(seed)
os.makedirs("data/prepared", exist_ok=True)
with open("data/prepared/train.tsv", "w") as train, open("data/prepared/test.tsv", "w") as test:
    for row in ET.parse(source).getroot():
        label = 1 if "python" in row.get("Tags", "") else 0
        text = row.get("Body", "").replace("\t", " ").replace("\n", " ")
        (test if random.random() < split else train).write(f"{row.get('Id')}\t{label}\t{text}\n")
