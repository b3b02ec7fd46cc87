#!/usr/bin/env python3
"""Checks Kubernetes manifests offline against the Kubernetes OpenAPI models.

The models are the official Python client's (`pip install kubernetes`), generated from the
Kubernetes OpenAPI spec: every field name and type of every object is checked recursively, an
unknown field is an error (kubectl's --validate=strict), and the client's own deserializer
then enforces required fields. `kubectl --dry-run=client` cannot do this without a cluster: it
downloads the OpenAPI document from the API server.

Usage: check_manifest.py FILE|-   Prints the documents as one JSON array on success, so a
caller can check values too; exits 1 with one line per problem otherwise, 3 when the
`kubernetes` or `yaml` module is missing.
"""
import json
import re
import sys

try:
    import kubernetes.client as k8s
    import yaml
except ImportError as e:  # the caller skips, saying why
    print(f"missing module: {e.name}", file=sys.stderr)
    sys.exit(3)

KINDS = {
    ("v1", "Service"): "V1Service",
    ("batch/v1", "Job"): "V1Job",
    ("v1", "ConfigMap"): "V1ConfigMap",
}

PRIMITIVES = {"str": str, "bool": bool, "float": (int, float), "object": object}


def check(value, type_name, path, errors):
    """Appends to `errors` every way `value` does not fit the model type `type_name`."""
    # Both spellings: older clients write list[T] and dict(str, T), newer List[T], Dict[str, T].
    m = re.fullmatch(r"[lL]ist\[(.+)\]", type_name)
    if m:
        if not isinstance(value, list):
            errors.append(f"{path}: expected a list")
            return
        for i, item in enumerate(value):
            check(item, m.group(1), f"{path}[{i}]", errors)
        return
    m = re.fullmatch(r"dict\(str, (.+)\)|Dict\[str, (.+)\]", type_name)
    if m:
        if not isinstance(value, dict):
            errors.append(f"{path}: expected a map")
            return
        for k, v in value.items():
            check(v, m.group(1) or m.group(2), f"{path}.{k}", errors)
        return
    if type_name == "int":
        if not isinstance(value, int) or isinstance(value, bool):
            errors.append(f"{path}: expected an integer, got {value!r}")
        return
    if type_name in ("datetime", "date"):
        return
    if type_name in PRIMITIVES:
        if not isinstance(value, PRIMITIVES[type_name]) or (
            type_name != "bool" and type_name != "object" and isinstance(value, bool)
        ):
            errors.append(f"{path}: expected {type_name}, got {value!r}")
        return
    model = getattr(k8s, type_name)
    if not isinstance(value, dict):
        errors.append(f"{path}: expected an object ({type_name})")
        return
    by_json = {j: a for a, j in model.attribute_map.items()}
    for key, v in value.items():
        attr = by_json.get(key)
        if attr is None:
            errors.append(f"{path}: unknown field {key!r} in {type_name}")
            continue
        check(v, model.openapi_types[attr], f"{path}.{key}", errors)


def main():
    src = sys.stdin if sys.argv[1:] in ([], ["-"]) else open(sys.argv[1])
    docs = [d for d in yaml.safe_load_all(src) if d is not None]
    errors = []
    api = k8s.ApiClient()
    for i, doc in enumerate(docs):
        kind = KINDS.get((doc.get("apiVersion"), doc.get("kind")))
        if kind is None:
            errors.append(f"doc {i}: unsupported {doc.get('apiVersion')}/{doc.get('kind')}")
            continue
        before = len(errors)
        check(doc, kind, f"doc {i} ({doc['kind']})", errors)
        if len(errors) == before:
            try:  # the generated setters raise on a missing required field
                api._ApiClient__deserialize(doc, kind)
            except ValueError as e:
                errors.append(f"doc {i} ({doc['kind']}): {e}")
    if errors:
        print("\n".join(errors), file=sys.stderr)
        sys.exit(1)
    print(json.dumps(docs))


if __name__ == "__main__":
    main()
