#!/usr/bin/env python3
"""No class of lanecast's sources grows into a god object: each class or
struct declared in algos/, ipc/, engine/, drivers/, apps/ or include/ has at
most MAX_FIELDS data members and MAX_METHODS member functions, counted in its
body. A method defined in another file is still declared in the body, so a
class cannot pass by spreading its behaviour over files, as the line cap per
file alone allowed.

Counted: instance data members (static constants, type aliases, nested types,
friends and access labels are not), and member functions by name (overloads
of one name count once; constructors, destructors and operators do not). A
record (a struct of settings or counters: nothing private, at most
RECORD_METHODS methods) has no field cap. The few classes that were over the
caps when the caps came are listed with what they had, and may not grow.

usage: class_caps_test.py SOURCE_ROOT [--list]
  --list  prints every class with its counts, largest first
"""
import os
import re
import signal
import sys

TOPS = ["algos", "ipc", "engine", "drivers", "apps", "include"]
MAX_FIELDS = 25
MAX_METHODS = 40
# A record - a struct of settings or counters, all public, with at most this
# many methods - is data, not an object: its fields are not capped.
RECORD_METHODS = 3
# Classes over the caps when the caps came, each held to what it had then
# until it is split (fields, methods). Only ever removed from.
OVER_THE_CAP = {
    "drivers/verbs/verbs_port.h:VerbsPort": (20, 48),
    "engine/reliable/send_channel.h:SendChannel": (22, 41),
    "algos/sim/simulator.cc:Sim": (34, 28),
    "engine/reliable/rate_control.h:RateControl": (26, 29),
}


def strip(text):
    """The source without comments, string and character literals, or
    preprocessor lines (each replaced by blanks, so braces stay balanced)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            out.append(" ")
        elif c == "'" and i > 0 and text[i - 1].isalnum():  # a digit separator: 10'000
            out.append(c)
            i += 1
        elif c == '"' or c == "'":
            if c == '"' and i > 0 and text[i - 1] == "R":  # raw string R"d(...)d"
                m = re.match(r'"([^(]*)\(', text[i:])
                end = text.find(")" + m.group(1) + '"', i) if m else -1
                i = n if end < 0 else end + len(m.group(1)) + 2
            else:
                j = i + 1
                while j < n and text[j] != c:
                    j += 2 if text[j] == "\\" else 1
                i = j + 1
            out.append('""')
        elif c == "#" and (i == 0 or text[text.rfind("\n", 0, i) + 1:i].strip() == ""):
            j = i
            while True:  # a directive continues over lines ending in a backslash
                k = text.find("\n", j)
                if k < 0:
                    j = n
                    break
                if text[k - 1] != "\\":
                    j = k
                    break
                j = k + 1
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def matching(text, open_at):
    """The index of the brace closing the one at open_at."""
    depth = 0
    for i in range(open_at, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    return len(text) - 1


CLASS_HEAD = re.compile(r"\b(class|struct|union)\s+(?:alignas\s*\([^)]*\)\s*)?([A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)\b(?:\s+final)?\s*(?::[^;{()]*)?\{")
ACCESS = re.compile(r"^\s*(public|private|protected)\s*:(?!:)\s*")
QUALIFIERS = re.compile(r"^((const|override|final|noexcept(\s*\([^)]*\))?|volatile|&&?|mutable)\s*)*(->\s*[\w:<>,\s*&]+)?$")


def without_templates(text):
    """text with template argument lists <...> removed (innermost first)."""
    while True:
        t = re.sub(r"<[^<>;{}]*>", "", text)
        if t == text:
            return t
        text = t


def function_body_starts(head):
    """Whether the '{' after `head` opens a function's body (rather than a
    brace initializer)."""
    h = without_templates(re.sub(r"\b(alignas|decltype)\s*\([^()]*\)", "", head)).strip()
    open_at = h.find("(")
    if open_at < 0:
        return False
    depth = 0
    for close in range(open_at, len(h)):
        depth += {"(": 1, ")": -1}.get(h[close], 0)
        if depth == 0:
            break
    rest = h[close + 1:].strip()
    if QUALIFIERS.match(rest):
        return True
    # A constructor's initializer list: an initializer's brace follows its
    # member's name, the body's follows a ')' or a '}'.
    return rest.startswith(":") and not rest.startswith("::") and h[-1] in ")}"


def members(body, cls):
    """(fields, methods, nested classes) of one class body (without its braces)."""
    fields, methods, nested = [], set(), []
    i, n, start = 0, len(body), 0
    while i < n:
        c = body[i]
        if c == "{":
            head = ACCESS.sub("", body[start:i])
            close = matching(body, i)
            t = re.match(r"\s*(template\s*<.*>\s*)?(class|struct|union)\b\s*(?:alignas\s*\([^)]*\)\s*)?([A-Za-z_]\w*)?", head)
            if t:
                if t.group(3):
                    nested.append((t.group(3), t.group(2), body[i + 1:close]))
                end = body.find(";", close)
                end = n if end < 0 else end
                tail = body[close + 1:end].strip()
                if re.match(r"^[A-Za-z_]\w*", tail):  # struct {...} name;
                    fields.append(tail)
                i = start = end + 1
                continue
            if re.match(r"\s*(typedef\s+)?enum\b", head):
                end = body.find(";", close)
                i = start = (n if end < 0 else end) + 1
                continue
            if function_body_starts(head):
                declare(head, cls, fields, methods)
                i = start = close + 1
                continue
            i = close + 1  # a brace initializer: the declaration goes on to its ';'
            continue
        if c == ";":
            declare(body[start:i], cls, fields, methods)
            start = i + 1
        elif c == ":" and ACCESS.match(body[start:i + 1]):
            start = i + 1
        i += 1
    return fields, methods, nested


SKIP = re.compile(r"^(using|typedef|friend|static_assert|template\s*<[^>]*>\s*(friend|using))\b")
STATIC = re.compile(r"^(static|inline static|static inline)\b")


def declare(decl, cls, fields, methods):
    d = " ".join(ACCESS.sub("", decl).split())
    d = re.sub(r"\[\[[^\]]*\]\]\s*", "", d)
    d = re.sub(r"\b(alignas|decltype)\s*\([^()]*\)\s*", "", d)
    if not d or SKIP.match(d) or d.startswith("enum ") or re.match(r"^(class|struct|union)\s+\w+$", d):
        return
    head = re.split(r"\s*=\s*(default|delete|0)\s*$|\s=\s|=\{|\s=$", d)[0]
    tmpl = without_templates(head)
    paren = tmpl.find("(")
    pointer = re.search(r"\(\s*(?:[\w:]+::)?\*\s*([A-Za-z_]\w*)\s*\)", tmpl)
    if pointer:  # a pointer to a function
        if not STATIC.match(d):
            fields.append(pointer.group(1))
        return
    if paren >= 0:
        name = re.findall(r"(~?[A-Za-z_]\w*)\s*$", tmpl[:paren].rstrip())
        if not name or "operator" in tmpl[:paren] or name[0].lstrip("~") == cls.split("::")[-1]:
            return  # operators, constructors, destructors
        methods.add(name[0])
        return
    if STATIC.match(d) or re.match(r"^(constexpr|inline constexpr)\b", d):
        return  # a static member or a constant: not the object's state
    m = re.findall(r"([A-Za-z_]\w*)\s*(\[[^\]]*\])?\s*(\{.*\})?\s*$", tmpl.strip())
    if m:
        fields.append(m[0][0])


def classes_in(text):
    """[(name, fields, methods)] of every class and struct defined in text."""
    found = []
    stripped = strip(text)
    for m in CLASS_HEAD.finditer(stripped):
        if re.search(r"\benum\s*$", stripped[:m.start()]) or inside_code(stripped, m.start()):
            continue  # a nested class is counted from its parent
        open_at = m.end() - 1
        close = matching(stripped, open_at)
        queue = [(m.group(2), m.group(1), stripped[open_at + 1:close])]
        while queue:
            name, keyword, body = queue.pop()
            fields, methods, nested = members(body, name)
            record = keyword != "class" and not re.search(r"\b(private|protected)\s*:(?!:)", body) and len(methods) <= RECORD_METHODS
            found.append((name, fields, methods, record))
            queue.extend((f"{name}::{n}", k, b) for n, k, b in nested)
    return found


def inside_code(text, at):
    """Whether position `at` lies inside a class or function body rather than
    only in namespaces."""
    stack = []
    for m in re.finditer(r"[{}]", text[:at]):
        if m.group(0) == "{":
            head = text[max(0, m.start() - 200):m.start()]
            stack.append(bool(re.search(r"\bnamespace\b[^;{}]*$", head) or re.search(r'extern\s+""\s*$', head)))
        elif stack:
            stack.pop()
    return not all(stack)


# What the counting must make of C++ it meets in this tree; checked first on
# every run, so a parser that counts nothing cannot pass the caps.
SAMPLE = r"""
namespace n {
class Sample final : public Base {
 public:
  Sample(int a, int b) : a_{a}, b_(b) { go(); }
  ~Sample() override;
  Sample(const Sample&) = delete;
  Sample& operator=(const Sample&) = delete;
  void go() const { if (a_) { b_ = 1; } }
  int get(int x) const noexcept;
  int get(double x) const noexcept;
  auto late() -> int { return 0; }
  static constexpr uint64_t kLimit = 10'000'000;
  using Alias = int;
  enum class Kind : uint8_t { A, B };
  struct Inner {
    int x = 0;
    void f();
  };
 private:
  friend class Other;
  int a_ = 0, unused_;
  int b_{0};
  alignas(64) std::atomic<uint64_t> c_{0};
  std::vector<std::pair<int, int>> d_;
  uint8_t e_[16] = {};
  void (*callback_)(int) = nullptr;
  std::function<void(int)> handler_ = [](int) { };
  static int shared_;
  const char* name_ = "x { y";
};
}
"""


def self_check():
    got = {name: (sorted(f), sorted(m), rec) for name, f, m, rec in classes_in(SAMPLE)}
    want = {
        "Sample": (["a_", "b_", "c_", "callback_", "d_", "e_", "handler_", "name_"], ["get", "go", "late"], False),
        "Sample::Inner": (["x"], ["f"], True),
    }
    return [] if got == want else [f"the counting itself is wrong: {got} (want {want})"]


def main():
    root = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("--") else "."
    listing = "--list" in sys.argv
    rows, problems = [], self_check()
    for top in TOPS:
        for folder, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if not name.endswith((".h", ".cc")):
                    continue
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, root)
                text = open(path, encoding="utf-8", errors="replace").read()
                for cls, fields, methods, record in classes_in(text):
                    rows.append((len(fields), len(methods), cls, rel))
                    ceiling = OVER_THE_CAP.get(f"{rel}:{cls}")
                    if ceiling:
                        if len(fields) > ceiling[0] or len(methods) > ceiling[1]:
                            problems.append(f"{rel}: {cls} has {len(fields)} fields and {len(methods)} methods; it is over "
                                            f"the caps and may not grow past {ceiling[0]} and {ceiling[1]} while it is split")
                        continue
                    if len(fields) > MAX_FIELDS and not record:
                        problems.append(f"{rel}: {cls} has {len(fields)} fields, more than {MAX_FIELDS}: "
                                        "give a part of its state, with the behaviour on it, a class of its own")
                    if len(methods) > MAX_METHODS:
                        problems.append(f"{rel}: {cls} has {len(methods)} methods, more than {MAX_METHODS}: "
                                        "give a part of its behaviour, with its state, a class of its own")
    if listing:
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `--list | head` ends quietly
        for f, m, cls, rel in sorted(rows, key=lambda r: -(r[0] + r[1])):
            print(f"{f:4d} fields {m:4d} methods  {cls}  ({rel})")
    for p in problems:
        print("FAIL:", p)
    print(f"class caps: {len(rows)} classes, at most {MAX_FIELDS} fields and {MAX_METHODS} methods each; "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
