"""Where derivatives keep the shadows of memory the program does not hand them (a mixin of
Generator): zeroed shadows of mutable globals that hold active data (one per lane in vector
forward mode; the program's own for a global marked enzyme_shadow), scratch shadows of inactive
and constant globals whose address meets shadowed memory, and a zero source / adjoint sink for
small read-only scalars without a shadow."""
from __future__ import annotations

from enzyme_cc.errors import UserError
from ..analysis.activity_basics import read_only_extent
from ..structure.type_layout import constant_float_global, global_type, pinned_constant

SCRATCH_LIMIT = 256        # bytes of the shadow a read-only inactive scalar joins (inactive_scratch)


class ShadowStorage:
    def shadow_global(self, g: str, lane=None, width=None) -> str:
        """Zero-initialized shadow of a mutable global that holds active data (lane k of vector
        forward mode of width N has its own: the default shadow set of that width, see
        global_shadows.py); the program's own for a global marked enzyme_shadow."""
        if g in self.reg.shadows:
            if lane is not None:
                raise UserError(f"global '{g[1:]}' has a shadow of its own (enzyme_shadow), "
                                "which holds one tangent: vector forward mode (enzyme_width) "
                                "needs one per lane; hint: use width 1 for it")
            return self.reg.shadows[g]
        ty = global_type(self.module, g)
        if ty is not None and self.module.named_types.get(ty) == "opaque":
            # a library's object of a type the program never completes (Open MPI's
            # MPI_REQUEST_NULL, &ompi_request_null, stored into a request array): the program
            # reads and writes none of its fields, so it holds no active data and is its own
            # shadow
            return g
        name = "@ad.shadow." + g[1:].strip('"') + (f".w{width}.L{lane}" if lane is not None else "")
        base, k = name, 2
        while name in self.module.globals:  # an inner round's shadow: in use as primal storage
            name, k = f"{base}.o{k}", k + 1
        self.shadow_lanes.setdefault(g, set()).add(lane if lane is None else (width, lane))
        if name not in self.decls:
            if ty is None:
                raise UserError(f"cannot determine the type of global '{g[1:]}' to shadow it")
            self.decls[name] = f"{name} = internal global {ty} zeroinitializer, align 16"
        return name

    def scratch_shadow(self, g: str) -> str:
        """A shadow for an enzyme_inactive global where a pointer to it meets shadowed pointers
        (a select or phi choosing between it and active memory): what derivatives write there is
        dropped, as the global holds none; it is zeroed when each derivative starts."""
        self.scratch_globals.add(g)
        return self.shadow_global(g)

    def constant_shadow(self, g: str) -> str:
        """The shadow of a constant global where its address meets shadowed memory (stored in
        it, passed where a callee reads active data, joined by a select): for float data a
        zeroed scratch (its tangent is zero, its adjoints dropped; the constant itself would
        give its values as tangents and fault on adjoints), else the global itself (a string)."""
        return self.scratch_shadow(g) if constant_float_global(self.module, g) else g

    def unwritten_global_shadow(self, g: str) -> str | None:
        """The shadow of a global the program never writes, where it has one: a constant's
        (constant_shadow), or a pointer global holding a constant descriptor's address
        (pinned_shadow); None for other globals."""
        if not g.startswith("@"):
            return None
        if self.module.is_constant_global(g):
            return self.constant_shadow(g)
        return self.pinned_shadow(g) if pinned_constant(self.module, g) else None

    def pinned_shadow(self, g: str) -> str:
        """The shadow of a pointer global nothing writes that holds a constant descriptor's
        address (type_layout.pinned_constant): a constant holding the descriptor's shadow."""
        name = "@ad.pinned." + g[1:].strip('"')
        if name not in self.decls:
            target = self.constant_shadow(pinned_constant(self.module, g))
            self.decls[name] = f"{name} = internal constant ptr {target}, align 8"
        return name

    def inactive_scratch(self, synth, v: str) -> str | None:
        """A shadow for pointer v into memory without one (an enzyme_const scalar captured by
        address) that a select or phi joins with shadowed memory, where the code only reads
        small non-pointer data through it (activity.read_only_extent): tangents read zeros
        from a constant; adjoints land in a sink nothing reads. None otherwise."""
        n = read_only_extent(self.module, synth.fn, v)
        if not n or n > SCRATCH_LIMIT:
            return None
        forward = synth.mode == "forward"
        name = "@ad.zeros" if forward else "@ad.sink"
        while name in self.module.globals:      # an inner round's, in use as primal data
            name += ".o"
        self.decls[name] = (f"{name} = internal {'constant' if forward else 'global'} "
                            f"[{SCRATCH_LIMIT} x i8] zeroinitializer, align 16")
        return name
