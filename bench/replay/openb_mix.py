#!/usr/bin/env python3
"""Builds new mixes of the openb pod list, for checking a packing policy on mixes it
was not developed on (bench/README.md, "openb: held-out and self-made mixes").

The FGD authors derived their mixes from the default list by changing one share at a
time; this does the same, from the default list alone, with a fixed seed:

  --cpu-share S       CPU-only pods are S of all pods (GPU pods kept as they are;
                      CPU-only pods resampled from the default's CPU-only pods)
  --share-frac F      shared-GPU pods are F of the GPU pods (GPU pod count kept;
                      shared and whole-GPU pods resampled from their own kind)
  --multi-extra N     N more multi-GPU pods, resampled from the default's multi-GPU pods
  --spec-frac F       F of the GPU pods name GPU models, drawn from the models the
                      gpuspec10 list names for pods of the same kind (shared/whole)

Output has the full eleven columns; names are renumbered openb-pod-NNNN.

  openb_mix.py --data /work/shared/data/openb --cpu-share 0.25 --seed 7 > mix.csv
"""
import argparse
import csv
import random
import sys


def kind(row):
    if int(row["num_gpu"]) == 0 or int(row["gpu_milli"]) == 0:
        return "cpu"
    if int(row["gpu_milli"]) < 1000:
        return "share"
    return "multi" if int(row["num_gpu"]) > 1 else "whole"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True, help="folder with openb_pod_list_default.csv and _gpuspec10.csv")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cpu-share", type=float)
    ap.add_argument("--share-frac", type=float)
    ap.add_argument("--multi-extra", type=int, default=0)
    ap.add_argument("--spec-frac", type=float)
    args = ap.parse_args()
    rng = random.Random(args.seed)

    with open(f"{args.data}/openb_pod_list_default.csv", newline="") as f:
        reader = csv.DictReader(f)
        columns = reader.fieldnames
        default = list(reader)
    by_kind = {}
    for r in default:
        by_kind.setdefault(kind(r), []).append(r)

    gpu_pods = [r for r in default if kind(r) != "cpu"]
    if args.share_frac is not None:
        n = len(gpu_pods)
        n_share = round(args.share_frac * n)
        whole = by_kind["whole"] + by_kind["multi"]
        gpu_pods = [rng.choice(by_kind["share"]) for _ in range(n_share)]
        gpu_pods += [rng.choice(whole) for _ in range(n - n_share)]
    gpu_pods += [rng.choice(by_kind["multi"]) for _ in range(args.multi_extra)]

    cpu_pods = by_kind["cpu"]
    if args.cpu_share is not None:
        n_cpu = round(args.cpu_share / (1 - args.cpu_share) * len(gpu_pods))
        cpu_pods = list(cpu_pods[:n_cpu]) + [rng.choice(by_kind["cpu"]) for _ in range(n_cpu - len(cpu_pods))]

    pods = [dict(r) for r in gpu_pods + cpu_pods]
    for r in pods:
        r["gpu_spec"] = ""
    if args.spec_frac is not None:
        with open(f"{args.data}/openb_pod_list_gpuspec10.csv", newline="") as f:
            specs = {}
            for r in csv.DictReader(f):
                if r["gpu_spec"]:
                    specs.setdefault("share" if kind(r) == "share" else "whole", []).append(r["gpu_spec"])
        for r in pods:
            k = kind(r)
            if k != "cpu" and rng.random() < args.spec_frac:
                r["gpu_spec"] = rng.choice(specs["share" if k == "share" else "whole"])

    rng.shuffle(pods)  # the replay shuffles again per seed; this only mixes the kinds
    out = csv.DictWriter(sys.stdout, fieldnames=columns, lineterminator="\n")
    out.writeheader()
    for i, r in enumerate(pods):
        r["name"] = f"openb-pod-{i:04d}"
        out.writerow(r)


if __name__ == "__main__":
    main()
