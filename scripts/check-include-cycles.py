#!/usr/bin/python3
"""Fails when file pairs include each other, directly or around a circle.

A file pair (foo.c, foo.h, foo.cpp) is one node; a quoted or angled
#include of bar.h from any file of the pair is an edge foo -> bar when bar
is a pair in the folders given. Prints each circle (its pairs, and one
include line per edge) and exits 1; exits 0 when there is none.

Usage: check-include-cycles.py FOLDER...
"""
import os
import re
import sys

INCLUDE = re.compile(r'\s*#\s*include\s+["<]([^">]+)[">]')


def pairs(folders):
    found = {}
    for folder in folders:
        for d, dirs, files in os.walk(folder):
            dirs[:] = [x for x in dirs if not x.startswith(('.', 'build'))]
            for f in sorted(files):
                if f.endswith(('.c', '.h', '.cpp')):
                    found.setdefault(os.path.splitext(f)[0], []).append(
                        os.path.join(d, f))
    return found


def graph_of(found):
    graph = {}
    for stem, files in found.items():
        edges = graph.setdefault(stem, {})
        for path in files:
            with open(path, errors='replace') as src:
                for n, line in enumerate(src, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    target = os.path.splitext(os.path.basename(m.group(1)))[0]
                    if target in found and target != stem:
                        edges.setdefault(target, '%s:%d' % (path, n))
    return graph


def circles(graph):
    """Strongly connected components of more than one pair (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(100000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    graph = graph_of(pairs(sys.argv[1:]))
    found = circles(graph)
    for comp in found:
        print('circle: ' + ' '.join(comp))
        for a in comp:
            for b, where in sorted(graph[a].items()):
                if b in comp:
                    print('  %s -> %s (%s)' % (a, b, where))
    if not found:
        print('no include circles among %d file pairs' % len(graph))
    return 1 if found else 0


if __name__ == '__main__':
    sys.exit(main())
