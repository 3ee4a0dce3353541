#!/usr/bin/env python3
"""Names the step an `apptainer build` log stopped in, for a one-line error:

    build_step.py build.log        # e.g. "the %post section of stage final"

Apptainer logs "Starting build...", one bootstrap per stage ("Build stage: NAME" in multi-stage
recipes), then "Running setup/post/test scriptlet", "Copying ... files" and "Creating SIF file...".
A log that stopped before any scriptlet failed while bootstrapping (the base image is missing or not an
image); one with a FATAL line while parsing names the definition file.
"""
import re
import sys

STEPS = (
    (re.compile(r'Running (setup|post|test) scriptlet'), lambda m: f'the %{m.group(1)} section'),
    (re.compile(r'Copying (.+?)(?: files)?(?: from| to|$)'), lambda m: 'copying %files'),
    (re.compile(r'Creating SIF file'), lambda m: 'writing the SIF file'),
)


def failed_step(text):
    clean = re.sub(r'\x1b\[[0-9;]*m', '', text)
    if re.search(r'FATAL:.*(parse|definition|unrecognized|while parsing)', clean, re.I) \
            and 'Starting build' not in clean:
        return 'parsing the definition file'
    stage, step = None, None
    for line in clean.splitlines():
        m = re.search(r'(?:Build stage|stage):? +(\w+)', line, re.I)
        if m and 'INFO' in line:
            stage, step = m.group(1), None
        for pattern, name in STEPS:
            m = pattern.search(line)
            if m and 'INFO' in line:
                step = name(m)
    where = f' of stage {stage}' if stage else ''
    if step is None:
        return f'the bootstrap{where} (is the base image there, and is it an image?)'
    return f'{step}{where}'


def main(argv):
    if len(argv) != 2:
        print('usage: build_step.py APPTAINER_BUILD_LOG', file=sys.stderr)
        return 2
    try:
        with open(argv[1], errors='replace') as f:
            text = f.read()
    except OSError as err:
        print(f'build_step: cannot read {argv[1]}: {err.strerror}', file=sys.stderr)
        return 2
    print(failed_step(text))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
