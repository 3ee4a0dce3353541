"""The modules of the yeebench package import each other without cycles.

`import_graph` reads every module under reframe/yeebench (an AST scan, so imports inside functions
count as much as those at the top, and relative imports are resolved) into module -> modules it
imports. Only imports of modules in the package are edges. An import of a package is an import of
its `__init__`: `from yeebench.results import store` is an edge to `yeebench.results.store` (a
module), `from yeebench.results.figures import FIGURES` one to `yeebench.results.figures` (a name
defined by the package's `__init__`). The packages a dotted name passes through on the way are not
edges of their own.
"""
import ast
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1]


def module_names(package_dir):
    """Dotted name of every module under `package_dir` -> its file (a package is named by its
    `__init__.py`)."""
    package_dir = Path(package_dir)
    modules = {}
    for path in sorted(package_dir.rglob('*.py')):
        parts = (package_dir.name,) + path.relative_to(package_dir).with_suffix('').parts
        if parts[-1] == '__init__':
            parts = parts[:-1]
        modules['.'.join(parts)] = path
    return modules


def _is_package(path):
    return path.name == '__init__.py'


def _imported_names(tree, module, is_package):
    """Every dotted name `tree` imports, with `from X import y` giving both X and X.y (the caller keeps
    X.y where it is a module, X otherwise)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split('.')
                if not is_package:
                    base = base[:-1]          # a module's level 1 is its package
                base = base[:len(base) - (node.level - 1)] if node.level > 1 else base
                source = '.'.join(base + ([node.module] if node.module else []))
            else:
                source = node.module
            for alias in node.names:
                yield source, alias.name


def _resolve(name, modules):
    """The module `name` refers to: itself, or the closest enclosing module that exists."""
    parts = name.split('.')
    while parts:
        candidate = '.'.join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def import_graph(package_dir):
    """module -> set of modules of the same package it imports (anywhere in its source)."""
    modules = module_names(package_dir)
    root = Path(package_dir).name
    graph = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        edges = set()
        for source, name in _imported_names(tree, module, _is_package(path)):
            if not source or not (source == root or source.startswith(root + '.')):
                continue
            target = None
            if name and name != '*' and f'{source}.{name}' in modules:
                target = f'{source}.{name}'
            else:
                target = _resolve(source, modules)
            if target and target != module:
                edges.add(target)
        graph[module] = edges
    return graph


def cycles(graph):
    """One cycle (a list of modules, the first repeated at the end) per strongly connected group of
    modules that import each other, in a stable order."""
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def connect(node):                      # Tarjan's algorithm, iteratively
        work = [(node, iter(sorted(graph.get(node, ()))))]
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        while work:
            current, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[current] = min(low[current], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[current])
            if low[current] == index[current]:
                group = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == current:
                        break
                if len(group) > 1:
                    groups.append(group)

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return [_cycle_in(group, graph) for group in sorted(groups, key=min)]


def _cycle_in(group, graph):
    """A path through `group` from its first module back to it (breadth-first: a shortest one)."""
    start = min(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph[node] & group):
                if child == start:
                    return paths[node] + [start]
                if child not in paths:
                    paths[child] = paths[node] + [child]
                    following.append(child)
        frontier = following
    raise AssertionError(f'no cycle through {start} in {sorted(group)}')


#: The tools: they read what the checks wrote (ReFrame's report and results database) and may import
#: the check library; no check and no check-library module imports them.
TOOLS = ('yeebench.results', 'yeebench.vcluster', 'yeebench.acceptance', 'yeebench.siteconfig', 'yeebench.cli', 'yeebench.package_cli',
         'yeebench.__main__')
CHECKS = 'yeebench.checks'


def layer(module):
    """'checks' (yeebench/checks/<experiment>/), 'tools' (TOOLS), 'tests', or 'library' (the rest)."""
    if '.tests' in module or module.endswith('.conftest'):
        return 'tests'
    if module == CHECKS or module.startswith(CHECKS + '.'):
        return 'checks'
    if any(module == tool or module.startswith(tool + '.') for tool in TOOLS):
        return 'tools'
    return 'library'


#: (importer's layer, imported layer) pairs that break the layering.
FORBIDDEN = {('library', 'tools'), ('library', 'checks'), ('checks', 'tools'), ('tools', 'checks'),
             ('library', 'tests'), ('checks', 'tests'), ('tools', 'tests')}


def layering_violations(graph):
    """(importer, imported) pairs that cross the layers the wrong way, plus a check folder importing
    another experiment's helpers (each experiment changes in its own folder)."""
    found = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            if (layer(module), layer(target)) in FORBIDDEN:
                found.append((module, target))
            elif layer(module) == layer(target) == 'checks' and \
                    module.split('.')[2:3] != target.split('.')[2:3]:
                found.append((module, target))
    return found


def test_no_module_imports_across_the_layers():
    found = layering_violations(import_graph(PACKAGE_DIR))
    assert not found, 'imports across the layers: ' + '; '.join(f'{a} -> {b}' for a, b in found)


def test_the_layering_rule_catches_an_upward_import():
    graph = {'yeebench.base': {'yeebench.results.store'}, 'yeebench.checks.pt2pt.foms': {'yeebench.fits'},
             'yeebench.checks.numa.numa': {'yeebench.checks.pt2pt.foms'},
             'yeebench.results.ingest': {'yeebench.metrics'}, 'yeebench.vcluster.cli': {'yeebench.checks.io.storage'}}
    assert layering_violations(graph) == [('yeebench.base', 'yeebench.results.store'),
                                          ('yeebench.checks.numa.numa', 'yeebench.checks.pt2pt.foms'),
                                          ('yeebench.vcluster.cli', 'yeebench.checks.io.storage')]


def test_no_import_cycles_between_yeebench_modules():
    found = cycles(import_graph(PACKAGE_DIR))
    assert not found, 'import cycles: ' + '; '.join(' -> '.join(cycle) for cycle in found)


def test_the_graph_sees_imports_inside_functions_relative_imports_and_packages(tmp_path):
    pkg = tmp_path / 'pkg'
    (pkg / 'sub').mkdir(parents=True)
    (pkg / '__init__.py').write_text('')
    (pkg / 'a.py').write_text('def f():\n    from pkg.sub import b\n')
    (pkg / 'sub' / '__init__.py').write_text('from .c import VALUE\n')
    (pkg / 'sub' / 'b.py').write_text('from .. import a\nfrom . import c\nimport os\n')
    (pkg / 'sub' / 'c.py').write_text('from pkg.sub import OTHER\nVALUE = 1\n')
    graph = import_graph(pkg)
    assert graph == {'pkg': set(), 'pkg.a': {'pkg.sub.b'}, 'pkg.sub': {'pkg.sub.c'},
                     'pkg.sub.b': {'pkg.a', 'pkg.sub.c'}, 'pkg.sub.c': {'pkg.sub'}}
    assert cycles(graph) == [['pkg.a', 'pkg.sub.b', 'pkg.a'], ['pkg.sub', 'pkg.sub.c', 'pkg.sub']]


def test_the_suite_configuration_imports_the_check_library_only():
    config = PACKAGE_DIR.parent / 'config'
    found = []
    for path in sorted(config.rglob('*.py')):
        for source, name in _imported_names(ast.parse(path.read_text()), 'config', False):
            if source and source.startswith('yeebench') and layer(f'{source}.{name}' if name else source) != 'library':
                found.append(f'{path.relative_to(config)}: {source}.{name}')
    assert not found, 'the configuration imports beyond the check library: ' + '; '.join(found)
