#!/usr/bin/env python3
"""Names the step an `apptainer build` log stopped in, for a one-line error:

    build_step.py build.log [recipe.def]     # e.g. "the %post section of stage final"
                                             # or "copying %files of stage final: no space left on device"

Apptainer logs "Starting build...", then for each stage its bootstrap ("Extracting local image...",
"Fetching ...", ...), "Running setup/post/test scriptlet", "Copying ..." for %files, and finally
"Creating SIF file...". A log that stopped before any of those failed in the bootstrap (the base image
is missing or is not an image). With the definition file, the n-th bootstrap is named by the n-th
`Stage:` line of the recipe. The cause follows the step where the log's last FATAL or ERROR line
gives one (a full disk is named as such: the build unpacks each stage in APPTAINER_TMPDIR).
"""
import re
import sys

#: INFO lines that start a stage (Apptainer's bootstrap agents).
BOOTSTRAP = re.compile(r'^INFO:\s+(Extracting local image|Fetching|Getting image source|Converting|'
                       r'Unpacking|Downloading|Pulling)', re.M)
STEPS = (
    (re.compile(r'^INFO:\s+Running (setup|post|test) scriptlet'), lambda m: f'the %{m.group(1)} section'),
    (re.compile(r'^INFO:\s+Copying '), lambda m: 'copying %files'),
    (re.compile(r'^INFO:\s+Creating SIF file'), lambda m: 'writing the SIF file'),
)


def failure_cause(log_text):
    '''The last FATAL/ERROR line of the log, short: the failing command's own message, or None.'''
    errors = re.findall(r'^(?:FATAL|ERROR):\s*(.*\S)', re.sub(r'\x1b\[[0-9;]*m', '', log_text), re.M)
    if not errors:
        return None
    cause = errors[-1]
    if 'no space left on device' in cause.lower():
        return 'no space left on device'
    cause = cause.rsplit(']: ', 1)[-1]               # "while copying [a] to b: [cp args]: cp: message"
    cause = re.sub(r'^While performing build:\s*', '', cause)
    return cause if len(cause) <= 200 else cause[:197] + '...'


def failed_step(log_text, def_text=None):
    '''The step the build in `log_text` stopped in, with the stage name when `def_text` has stages.'''
    names = re.findall(r'^Stage:\s*(\S+)', def_text or '', re.M)
    stage, step = -1, None
    for line in re.sub(r'\x1b\[[0-9;]*m', '', log_text).splitlines():
        if BOOTSTRAP.match(line) and (step is not None or stage < 0):
            stage, step = stage + 1, None
            continue
        for pattern, name in STEPS:
            m = pattern.match(line)
            if m:
                step = name(m)
    where = f' of stage {names[stage]}' if 0 <= stage < len(names) else ''
    if step is None:
        return f'the bootstrap{where} (is the base image there, and is it an image?)'
    return f'{step}{where}'


def main(argv):
    if len(argv) not in (2, 3):
        print('usage: build_step.py APPTAINER_BUILD_LOG [DEFINITION_FILE]', file=sys.stderr)
        return 2
    texts = []
    for path in argv[1:]:
        try:
            with open(path, errors='replace') as f:
                texts.append(f.read())
        except OSError as err:
            print(f'build_step: cannot read {path}: {err.strerror}', file=sys.stderr)
            return 2
    cause = failure_cause(texts[0])
    print(failed_step(*texts) + (f': {cause}' if cause else ''))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
