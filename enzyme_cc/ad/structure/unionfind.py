"""Union-find over value names: pointers joined by phis/selects (and spill slots) denote the
same memory for type and activity analysis."""


class UnionFind:
    def __init__(self):
        self._parent: dict[str, str] = {}

    def find(self, v: str) -> str:
        while self._parent.get(v, v) != v:
            v = self._parent[v]
        return v

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self._parent[ra] = rb
