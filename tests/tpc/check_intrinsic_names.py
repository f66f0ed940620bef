#!/usr/bin/env python3
"""Keeps docs/targets/tpc.md's list of tpc-intrinsics.h names Tessera does not provide honest.

Preprocesses a file that includes compat/tpc-c.h and checks every name of the Gaudi set
(data/gaudi_decls.txt) is either defined there or listed in data/not_provided.txt with a reason,
never both: a provided name that disappears fails, and so does a listed name that becomes
provided (remove it from the list). A name counts as defined when the preprocessed text has it
followed by '(' (as the session's diff tool counted it)."""
import argparse
import re
import subprocess
import sys


def expand(pattern):
    """Bash-style brace expansion: a_{b,c}_d -> a_b_d a_c_d."""
    m = re.search(r'\{([^{}]*)\}', pattern)
    if not m:
        return [pattern]
    out = []
    for alt in m.group(1).split(','):
        out += expand(pattern[:m.start()] + alt + pattern[m.end():])
    return out


def meaningful_lines(path):
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.split('#', 1)[0].strip()
            if line:
                yield number, line


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument('--cxx', required=True)
    ap.add_argument('--include', required=True)
    ap.add_argument('--source', required=True)
    ap.add_argument('--declared', required=True)
    ap.add_argument('--not-provided', required=True)
    args = ap.parse_args()

    declared = {}  # name -> family
    for _, line in meaningful_lines(args.declared):
        family, patterns = line.split(':', 1)
        for p in patterns.split():
            for name in expand(p):
                declared[name] = family.strip()

    errors = []
    reasons = {}
    listed = {}  # name -> reason
    for number, line in meaningful_lines(args.not_provided):
        words = line.split()
        if words[0] == 'reason':
            key = words[1].rstrip(':')
            reasons[key] = ' '.join(words[2:])
            continue
        if len(words) != 2:
            errors.append(f'not_provided.txt:{number}: write "<name or {{a,b}} pattern> <reason>"')
            continue
        pattern, reason = words
        if reason not in reasons:
            errors.append(f'not_provided.txt:{number}: reason "{reason}" is not one of the '
                          f'"reason" lines above it: {", ".join(sorted(reasons))}')
        for name in expand(pattern):
            if name not in declared:
                errors.append(f'not_provided.txt:{number}: {name} is not in the Gaudi set '
                              f'(gaudi_decls.txt); fix the name or remove it')
            elif name in listed:
                errors.append(f'not_provided.txt:{number}: {name} is listed twice')
            listed[name] = reason

    pp = subprocess.run([args.cxx, '-std=c++20', '-E', '-I', args.include, args.source],
                        capture_output=True, text=True)
    if pp.returncode != 0:
        sys.exit(f'preprocessing {args.source} failed:\n{pp.stderr}')
    defined = set(re.findall(r'\b([A-Za-z_][A-Za-z0-9_]*)\s*\(', pp.stdout))

    for name, family in sorted(declared.items()):
        if name in listed and name in defined:
            errors.append(f'{name} ({family}) is now provided: remove it from not_provided.txt '
                          f'and update the table in docs/targets/tpc.md')
        elif name not in listed and name not in defined:
            errors.append(f'{name} ({family}) is declared for Gaudi but tpc-c.h does not define '
                          f'it: provide it, or list it in not_provided.txt with its reason')

    provided = sum(1 for n in declared if n in defined)
    print(f'{len(declared)} names declared for Gaudi, {provided} provided, '
          f'{len(declared) - provided} not provided')
    for key in sorted(reasons):
        count = sum(1 for r in listed.values() if r == key)
        print(f'  {count:4d} {key}: {reasons[key]}')
    for e in errors:
        print('error: ' + e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
