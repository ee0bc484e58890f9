#!/usr/bin/env python3
"""Reads a Containerfile the way podman/buildah do, for check-steps.sh.

  containerfile_steps.py steps FILE STAGE [--build-arg NAME=VALUE]...
      One stage's instructions as bash commands (step_arg, step_env,
      step_run, step_copy, step_user, step_workdir, step_entrypoint, step_cmd,
      step_healthcheck, step_meta), each argument quoted for bash, in order,
      for check-steps.sh to `source` after defining those functions.
  containerfile_steps.py stages FILE
      "NAME BASE" per stage, in order (the last is the image's target).
  containerfile_steps.py lint HIPR_DEV FILE...
      Checks that every FILE's stage `build` is the same text, and that its
      apt-get install list is the packages=( ) list of HIPR_DEV
      (deploy/hipr-dev). Exit 1 with the difference otherwise.

Only what the hipr Containerfiles use is understood: FROM [AS], ARG, ENV,
RUN (shell and exec form), COPY [--from=STAGE], USER, WORKDIR, EXPOSE,
HEALTHCHECK [options] CMD, ENTRYPOINT, CMD, LABEL, STOPSIGNAL. Anything
else is an error, so the Containerfile cannot grow a step this emulation
silently skips.
"""
import json
import re
import shlex
import sys

KNOWN = {"FROM", "ARG", "ENV", "RUN", "COPY", "USER", "WORKDIR", "EXPOSE", "HEALTHCHECK",
         "ENTRYPOINT", "CMD", "LABEL", "STOPSIGNAL"}


def logical_lines(text):
    """(line number, instruction text): comments dropped, continuations joined."""
    out, buf, start = [], "", 0
    for n, raw in enumerate(text.splitlines(), 1):
        s = raw.strip()
        if not buf and (not s or s.startswith("#")):
            continue
        if buf and s.startswith("#"):
            continue  # a comment line inside a continuation is dropped
        if buf and not s:
            continue  # as is an empty line
        if not buf:
            start = n
        line = raw.rstrip()
        if line.endswith("\\"):
            buf += line[:-1]
            continue
        buf += line
        out.append((start, buf.strip()))
        buf = ""
    if buf:
        out.append((start, buf.strip()))
    return out


def substitute(text, env):
    """$VAR, ${VAR}, ${VAR:-word}, ${VAR:+word}, as the builder expands them."""
    def repl(m):
        name = m.group(1) or m.group(2)
        op, word = m.group(3), m.group(4)
        value = env.get(name, "")
        if op == ":-":
            return value if value else word
        if op == ":+":
            return word if value else ""
        return value
    return re.sub(r"\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:[-+])([^}]*))?\})",
                  repl, text)


def exec_form(arg):
    arg = arg.strip()
    if arg.startswith("["):
        try:
            v = json.loads(arg)
            if isinstance(v, list) and all(isinstance(x, str) for x in v):
                return v
        except ValueError:
            pass
    return None


def parse(path):
    """[(global args), [stage dict]] where a stage is {name, base, steps}."""
    with open(path) as f:
        lines = logical_lines(f.read())
    global_args, stages = {}, []
    for n, line in lines:
        word, _, rest = line.partition(" ")
        inst = word.upper()
        rest = rest.strip()
        if inst not in KNOWN:
            raise SystemExit(f"{path}:{n}: {inst}: not understood by containerfile_steps.py")
        if inst == "FROM":
            parts = rest.split()
            if any(p.startswith("--") for p in parts):
                raise SystemExit(f"{path}:{n}: FROM options are not understood")
            base = substitute(parts[0], global_args)
            name = parts[2] if len(parts) == 3 and parts[1].upper() == "AS" else str(len(stages))
            stages.append({"name": name, "base": base, "steps": []})
            continue
        if not stages:
            if inst != "ARG":
                raise SystemExit(f"{path}:{n}: {inst} before FROM")
            k, _, v = rest.partition("=")
            global_args[k.strip()] = v.strip()
            continue
        stages[-1]["steps"].append((n, inst, rest))
    return global_args, stages


def stage_commands(path, stage_name, build_args):
    _, stages = parse(path)
    stage = next((s for s in stages if s["name"] == stage_name), None)
    if stage is None:
        raise SystemExit(f"{path}: no stage {stage_name!r} (stages: {[s['name'] for s in stages]})")
    env = {}  # what the builder substitutes in ENV/COPY/USER/WORKDIR: ARGs and ENVs so far
    out = []
    q = shlex.quote
    for n, inst, rest in stage["steps"]:
        if inst == "ARG":
            k, eq, v = rest.partition("=")
            k = k.strip()
            v = build_args.get(k, substitute(v.strip().strip('"'), env) if eq else "")
            env[k] = v
            out.append(f"step_arg {q(k)} {q(v)}")
        elif inst == "ENV":
            if "=" not in rest.split()[0]:
                k, _, v = rest.partition(" ")  # legacy ENV KEY VALUE
                pairs = [(k, v.strip())]
            else:
                pairs = [tuple(t.split("=", 1)) for t in shlex.split(rest)]
            for k, v in pairs:
                v = substitute(v, env)
                env[k] = v
                out.append(f"step_env {q(k)} {q(v)}")
        elif inst == "RUN":
            ex = exec_form(rest)
            out.append(f"step_run {q(shlex.join(ex) if ex else rest)}")
        elif inst == "COPY":
            args = shlex.split(rest)
            src_stage = ""
            while args and args[0].startswith("--"):
                opt = args.pop(0)
                if opt.startswith("--from="):
                    src_stage = opt[len("--from="):]
                else:
                    raise SystemExit(f"{path}:{n}: COPY {opt}: not understood")
            args = [substitute(a, env) for a in args]
            if len(args) < 2:
                raise SystemExit(f"{path}:{n}: COPY needs a source and a destination")
            if len(args) > 2 and not args[-1].endswith("/"):
                raise SystemExit(f"{path}:{n}: COPY of several sources needs a destination ending in /")
            out.append("step_copy " + " ".join(q(a) for a in [src_stage] + args))
        elif inst in ("USER", "WORKDIR"):
            out.append(f"step_{inst.lower()} {q(substitute(rest, env))}")
        elif inst in ("ENTRYPOINT", "CMD"):
            ex = exec_form(rest)
            args = ex if ex is not None else ["/bin/sh", "-c", rest]
            out.append(f"step_{inst.lower()} " + " ".join(q(a) for a in args))
        elif inst == "HEALTHCHECK":
            toks = rest.split()
            i = 0
            while i < len(toks) and toks[i].startswith("--"):
                i += 1
            if i < len(toks) and toks[i].upper() == "NONE":
                out.append("step_healthcheck")
                continue
            if i >= len(toks) or toks[i].upper() != "CMD":
                raise SystemExit(f"{path}:{n}: HEALTHCHECK without CMD")
            cmd = rest.split(None, i + 1)[i + 1] if len(rest.split(None, i + 1)) > i + 1 else ""
            ex = exec_form(cmd)
            args = ex if ex is not None else ["/bin/sh", "-c", cmd]
            out.append("step_healthcheck " + " ".join(q(a) for a in args))
        else:  # EXPOSE LABEL STOPSIGNAL
            out.append(f"step_meta {q(inst)} {q(rest)}")
    return out


def install_list(run_text):
    """The package names of the `apt-get install` in one RUN text."""
    m = re.search(r"apt-get install\s+(.*?)(?:&&|;|$)", run_text)
    if not m:
        return None
    return [t for t in m.group(1).split() if not t.startswith("-")]


def lint(hipr_dev, files):
    problems = []
    with open(hipr_dev) as f:
        text = f.read()
    m = re.search(r"^packages=\((.*?)^\)", text, re.S | re.M)
    if not m:
        raise SystemExit(f"{hipr_dev}: no packages=( ) list")
    dev = set(re.sub(r"#.*", "", m.group(1)).split())
    builds = {}
    for path in files:
        _, stages = parse(path)
        b = next((s for s in stages if s["name"] == "build"), None)
        if b is None:
            problems.append(f"{path}: no stage 'build'")
            continue
        builds[path] = (b["base"], b["steps"])
        lists = [install_list(r) for _, i, r in b["steps"] if i == "RUN" and install_list(r) is not None]
        if len(lists) != 1:
            problems.append(f"{path}: stage build has {len(lists)} apt-get install steps, expected 1")
            continue
        got = set(lists[0])
        if got != dev:
            problems.append(f"{path}: build packages differ from {hipr_dev}: "
                            f"only in {hipr_dev}: {sorted(dev - got)}; only in {path}: {sorted(got - dev)}")
    texts = {p: (base, [(i, r) for _, i, r in steps]) for p, (base, steps) in builds.items()}
    if len(set(json.dumps(t) for t in texts.values())) > 1:
        problems.append("the build stages differ between " + ", ".join(texts))
    for p in problems:
        print("lint: " + p, file=sys.stderr)
    return 1 if problems else 0


def main(argv):
    if len(argv) >= 3 and argv[0] == "steps":
        build_args = {}
        rest = argv[3:]
        while rest:
            if rest[0] != "--build-arg" or len(rest) < 2 or "=" not in rest[1]:
                raise SystemExit("usage: steps FILE STAGE [--build-arg NAME=VALUE]...")
            k, v = rest[1].split("=", 1)
            build_args[k] = v
            rest = rest[2:]
        print("\n".join(stage_commands(argv[1], argv[2], build_args)))
        return 0
    if len(argv) == 2 and argv[0] == "stages":
        for s in parse(argv[1])[1]:
            print(s["name"], s["base"])
        return 0
    if len(argv) >= 3 and argv[0] == "lint":
        return lint(argv[1], argv[2:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
