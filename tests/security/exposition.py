#!/usr/bin/env python3
"""A reader of Prometheus' text exposition format (0.0.4), strict: every line
is `# HELP name text`, `# TYPE name counter|gauge`, or `name{label="value",...}
value` with label values escaped (\\\\, \\", \\n only) - anything else is an
error naming the line. Prints one line per sample: the name, then each label
as key=repr(value), so a test can grep what came through.

  exposition.py FILE
"""
import re
import sys

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


def parse_sample(line):
    m = NAME.match(line)
    if not m:
        raise ValueError("no metric name")
    name, i, labels = m.group(0), m.end(), {}
    if i < len(line) and line[i] == "{":
        i += 1
        while line[i] != "}":
            k = LABEL.match(line, i)
            if not k or line[k.end():k.end() + 2] != '="':
                raise ValueError("not a label at column %d" % i)
            i, value = k.end() + 2, ""
            while line[i] != '"':
                if line[i] == "\\":
                    esc = line[i + 1]
                    if esc not in '\\"n':
                        raise ValueError("bad escape \\%s" % esc)
                    value += "\n" if esc == "n" else esc
                    i += 2
                else:
                    value += line[i]
                    i += 1
            labels[k.group(0)] = value
            i += 1
            if line[i] == ",":
                i += 1
        i += 1
    if not re.fullmatch(r" [0-9]+(\.[0-9]+)?", line[i:]):
        raise ValueError("not ` value` after the labels")
    return name, labels


def main():
    text = open(sys.argv[1], encoding="utf-8").read()
    if not text.endswith("\n"):
        sys.exit("exposition: the text does not end with a line feed")
    for n, line in enumerate(text[:-1].split("\n"), 1):
        if re.fullmatch(r"# HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*", line) or \
           re.fullmatch(r"# TYPE [a-zA-Z_:][a-zA-Z0-9_:]* (counter|gauge)", line):
            continue
        try:
            name, labels = parse_sample(line)
        except (ValueError, IndexError) as e:
            sys.exit("exposition: line %d: %s: %r" % (n, e, line))
        print(name, " ".join("%s=%r" % kv for kv in sorted(labels.items())))


main()
