#!/usr/bin/python3
"""Records what a Tessera build computes for the benchmark networks, and compares two records.

A speed change must leave results and modeled cycles bit-identical. `record` runs
`tessera run` on every network, target and host thread count given and keeps the outputs (.npy)
and the profile with its host timings dropped; `compare` says whether two records (say, from the
main branch's build and from a change's) agree byte for byte, and where they differ. It also
checks, within one record, that every thread count gave the same bytes.

Usage:
  bench/record_runs.py record TESSERA_BINARY OUT_DIR --models DIR (scripts/make_models.py's output) [--targets gaudi reference]
                       [--networks resnet18 ...] [--threads 1 2]
  bench/record_runs.py compare RECORD_A RECORD_B
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys

NETWORKS = ["resnet_small", "separable_small", "resnet18", "mobilenet_v2", "squeezenet1_1", "resnet50"]


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def record(args):
    os.makedirs(args.out, exist_ok=True)
    summary = {}
    for net in args.networks:
        model = os.path.join(args.models, net + ".onnx")
        if not os.path.exists(model):  # the small networks are checked in
            model = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples",
                                 "models", net + ".onnx")
        for target in args.targets:
            for threads in args.threads:
                key = f"{net}/{target}/t{threads}"
                run_dir = os.path.join(args.out, net, target, f"t{threads}")
                os.makedirs(run_dir, exist_ok=True)
                profile = os.path.join(run_dir, "profile.json")
                env = dict(os.environ, TESSERA_THREADS=str(threads))
                subprocess.run([args.tessera, "run", model, "-t", target, "--outputs", run_dir,
                                "--profile", profile], env=env, check=True, stdout=subprocess.DEVNULL)
                with open(profile) as f:
                    prof = json.load(f)
                # Host time is the one thing allowed to change.
                prof.pop("host_seconds", None)
                with open(profile, "w") as f:
                    json.dump(prof, f, sort_keys=True, indent=1)
                outputs = {name: digest(os.path.join(run_dir, name))
                           for name in sorted(os.listdir(run_dir)) if name.endswith(".npy")}
                summary[key] = {"outputs": outputs, "profile": digest(profile),
                                "total_cycles": prof["total_cycles"]}
                print(key, prof["total_cycles"], "cycles", file=sys.stderr)
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, sort_keys=True, indent=1)
    return check_threads(summary)


def check_threads(summary):
    bad = 0
    groups = {}
    for key, entry in summary.items():
        groups.setdefault(key.rsplit("/", 1)[0], []).append((key, entry))
    for group, entries in groups.items():
        first = entries[0][1]
        for key, entry in entries[1:]:
            if entry["outputs"] != first["outputs"] or entry["profile"] != first["profile"]:
                print(f"{key}: differs from {entries[0][0]} (thread count changes the run)")
                bad += 1
    return bad


def compare(args):
    with open(os.path.join(args.a, "summary.json")) as f:
        a = json.load(f)
    with open(os.path.join(args.b, "summary.json")) as f:
        b = json.load(f)
    bad = check_threads(a) + check_threads(b)
    for key in sorted(set(a) & set(b)):
        what = [name for name in ("outputs", "profile") if a[key][name] != b[key][name]]
        if what:
            bad += 1
            print(f"{key}: {' and '.join(what)} differ (cycles {a[key]['total_cycles']} vs "
                  f"{b[key]['total_cycles']})")
        else:
            print(f"{key}: identical ({a[key]['total_cycles']} cycles)")
    for key in sorted(set(a) ^ set(b)):
        print(f"{key}: only in one record")
    print("identical" if bad == 0 else f"{bad} difference(s)")
    return 1 if bad else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("record")
    r.add_argument("tessera")
    r.add_argument("out")
    r.add_argument("--models", required=True)
    r.add_argument("--targets", nargs="+", default=["gaudi", "reference"])
    r.add_argument("--networks", nargs="+", default=NETWORKS)
    r.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    c = sub.add_parser("compare")
    c.add_argument("a")
    c.add_argument("b")
    args = parser.parse_args()
    sys.exit(1 if (record(args) if args.command == "record" else compare(args)) else 0)


if __name__ == "__main__":
    main()
