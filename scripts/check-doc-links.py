#!/usr/bin/env python3
"""Fails on a relative link in README.md or docs/*.md that points nowhere.

Every inline Markdown link [text](target) outside code (fenced blocks and `code spans` are left
out: a path there is text, not a link) whose target is not a URL must name a file or folder that
exists, relative to the page; a #fragment must be a heading of the page it names, spelled as
GitHub spells heading anchors. Every page of docs/ must also be linked from README.md, the index a
newcomer reads. Prints each broken link as PAGE:LINE: TARGET (WHY) and exits 1 if there is one.

usage: check-doc-links.py --root SRC
"""
import argparse
import os
import re
import sys

LINK = re.compile(r'\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]+)\)')
URL = re.compile(r'^[a-zA-Z][a-zA-Z0-9+.-]*:')


def prose_lines(text):
    """(line number, text) of the lines outside fenced code, code spans blanked."""
    fenced = False
    for n, line in enumerate(text.split('\n'), 1):
        if line.lstrip().startswith('```'):
            fenced = not fenced
            continue
        if not fenced:
            yield n, re.sub(r'`[^`]*`', '``', line)


def slug(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    s = heading.strip().lower()
    s = re.sub(r'[^\w\- ]', '', s)
    return s.replace(' ', '-')


def raw_headings(path):
    """Headings with their code spans kept: prose_lines blanks them, so read the file again."""
    text = open(path, encoding='utf-8').read()
    out, fenced = [], False
    for line in text.split('\n'):
        if line.lstrip().startswith('```'):
            fenced = not fenced
        elif not fenced and re.match(r'^#{1,6}\s', line):
            out.append(line)
    return out


def heading_anchors(path):
    out, seen = set(), {}
    for line in raw_headings(path):
        text = re.sub(r'^#{1,6}\s+', '', line).rstrip('# ').strip()
        text = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', text).replace('`', '')
        base = slug(text)
        k = seen.get(base, 0)
        seen[base] = k + 1
        out.add(base if k == 0 else f'{base}-{k}')
    return out


def broken_links(root, page):
    path = os.path.join(root, page)
    text = open(path, encoding='utf-8').read()
    for n, line in prose_lines(text):
        for m in LINK.finditer(line):
            target = m.group(1)
            if URL.match(target):
                continue
            file_part, _, fragment = target.partition('#')
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            if not os.path.exists(dest):
                yield n, target, 'no such file'
            elif fragment and dest.endswith('.md') and fragment not in heading_anchors(dest):
                yield n, target, f'no heading #{fragment} in {os.path.relpath(dest, root)}'


def unlinked_pages(root):
    readme = open(os.path.join(root, 'README.md'), encoding='utf-8').read()
    linked = {os.path.normpath(m.group(1).partition('#')[0]) for _, l in prose_lines(readme)
              for m in LINK.finditer(l)}
    for name in sorted(os.listdir(os.path.join(root, 'docs'))):
        if name.endswith('.md') and os.path.join('docs', name) not in linked:
            yield f'docs/{name}'


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--root', required=True)
    root = ap.parse_args().root
    pages = ['README.md'] + sorted(f'docs/{f}' for f in os.listdir(os.path.join(root, 'docs'))
                                   if f.endswith('.md'))
    bad = 0
    for page in pages:
        for n, target, why in broken_links(root, page):
            print(f'{page}:{n}: {target} ({why})')
            bad += 1
    for page in unlinked_pages(root):
        print(f'README.md: no link to {page} (every page of docs/ is linked from the README)')
        bad += 1
    print(f'check-doc-links: {len(pages)} page(s), {bad} problem(s)')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
