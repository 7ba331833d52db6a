"""A stage's parameters as the stage declares them.

Each stage names the params.yaml keys it reads (`READS`, beside its `main`). It parses params.yaml
whole, since the rules across sections need every value, but sees only those keys: reading any other
stops the stage with an error that names the key. dvc.yaml's `params:` for the stage are written
from the same names (`python -m pipeline.tools.stage_deps --write`), so a stage cannot read a value
whose change would not rerun it.
"""

from pipeline.infra.errors import PipelineError

OWN = "${key}"  # a foreach stage's own entry, as dvc.yaml names it (study.variants.${key})


class UndeclaredRead(PipelineError):
    """A stage read a parameter that its READS leave out."""


def key_tree(reads, own=None):
    """("data.test_lengths", "evaluate") -> {"data": {"test_lengths": True}, "evaluate": True}"""
    tree = {}
    for dotted in reads:
        *path, last = dotted.replace(OWN, str(own)).split(".")
        node = tree
        for part in path:
            node = node.setdefault(part, {})
            if node is True:  # a whole section already
                break
        else:
            node[last] = True
    return tree


class Declared:
    """A section (or all of Params) through the keys a stage declares: attribute and item access
    give the value, or a Declared of it where only some of its keys are declared."""

    __slots__ = ("_value", "_tree", "_name")

    def __init__(self, value, tree, name=""):
        self._value, self._tree, self._name = value, tree, name

    def _see(self, key, read):
        name = f"{self._name}.{key}" if self._name else str(key)
        sub = self._tree.get(key)
        if sub is None:
            raise UndeclaredRead(
                f"this stage reads {name}, which its READS leave out: add it there, then run "
                "python -m pipeline.tools.stage_deps --write"
            )
        return read() if sub is True else Declared(read(), sub, name)

    def __getattr__(self, key):
        if key.startswith("__"):  # pickle, copy and the like look for these
            raise AttributeError(key)
        return self._see(key, lambda: getattr(self._value, key))

    def __getitem__(self, key):
        return self._see(key, lambda: self._value[key])

    def __contains__(self, key):  # a mapping's declared keys only, as iteration gives them
        return key in self._tree and key in self._value

    def __iter__(self):
        return (key for key in self._tree if key in self._value)

    def __reduce__(self):  # to the seeds' worker processes
        return Declared, (self._value, self._tree, self._name)

    def __repr__(self):
        return f"Declared({self._name or 'params'}: {', '.join(self._tree)})"


def declared(params, reads, own=None):
    """`params` as a stage that reads `reads` sees them (`own`: its foreach entry's name)."""
    return Declared(params, key_tree(reads, own))
