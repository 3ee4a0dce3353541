"""Row and provenance JSON Schemas (files in schemas/), validated on write and on read.

A document is first put to the schema's compiled checks (fast_schema: a valid row costs microseconds,
not jsonschema's 0.3 ms); only one they do not accept goes to jsonschema, which finds and words the
error."""
import functools
import json
from pathlib import Path

import jsonschema

from yeebench.results.errors import ResultsError
from yeebench.results.fast_schema import compile_schema

SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"
ROW_SCHEMA_VERSION = 1
PROVENANCE_SCHEMA_VERSION = 1


@functools.lru_cache(maxsize=None)
def _schema(name):
    with open(SCHEMA_DIR / name) as fp:
        return json.load(fp)


@functools.lru_cache(maxsize=None)
def _validator(name):
    return jsonschema.Draft7Validator(_schema(name))


@functools.lru_cache(maxsize=None)
def _accepts(name):
    return compile_schema(_schema(name)) or (lambda document: False)


def _check(name, document, what):
    if _accepts(name)(document):
        return
    error = jsonschema.exceptions.best_match(_validator(name).iter_errors(document))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        raise ResultsError(f"{what}: schema violation at {where}: {error.message}")


def validate_row(row, what="row"):
    if isinstance(row, dict) and row.get("schema_version") not in (None, ROW_SCHEMA_VERSION):
        raise ResultsError(f"{what}: unknown row schema_version {row.get('schema_version')!r} "
                           f"(this yeebench reads version {ROW_SCHEMA_VERSION})")
    _check("row.schema.json", row, what)


def validate_provenance(prov, what="provenance"):
    if isinstance(prov, dict) and prov.get("schema_version") not in (None, PROVENANCE_SCHEMA_VERSION):
        raise ResultsError(f"{what}: unknown provenance schema_version {prov.get('schema_version')!r} "
                           f"(this yeebench reads version {PROVENANCE_SCHEMA_VERSION})")
    _check("provenance.schema.json", prov, what)
