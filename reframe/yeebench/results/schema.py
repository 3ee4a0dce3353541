"""Row and provenance JSON Schemas (files in schemas/), validated on write and on read."""
import functools
import json
from pathlib import Path

import jsonschema

from yeebench.results.errors import ResultsError

SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"
ROW_SCHEMA_VERSION = 1
PROVENANCE_SCHEMA_VERSION = 1


@functools.lru_cache(maxsize=None)
def _validator(name):
    with open(SCHEMA_DIR / name) as fp:
        schema = json.load(fp)
    return jsonschema.Draft7Validator(schema)


def _check(name, document, what):
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
