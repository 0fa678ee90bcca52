"""Shadow blocks of allocations: zeroed when made (a C heap block up to its usable size, which a
later realloc keeps), and freed with the primal block when the gradient ends."""
# C heap blocks (may be realloc'd) get their shadow zeroed up to malloc_usable_size: realloc
# keeps the old block's usable bytes, which must not bring stale memory into a shadow. It keeps no
# pointer (captures(none)): a shadow block that does not escape otherwise stays disjoint from
# every other pointer for LLVM's alias analysis.
USABLE_DECL = ("declare i64 @malloc_usable_size(ptr captures(none)) nounwind willreturn "
               "memory(read)")
C_HEAP = ("@malloc", "@calloc", "@aligned_alloc", "@realloc", "@memalign", "@valloc")


def zero_shadow_block(ctx, callee, s, nbytes):
    """Zero a fresh shadow block: all its usable bytes for C heap blocks (see USABLE_DECL)."""
    gen = ctx.gen()
    if callee in C_HEAP or callee == "@posix_memalign":
        u = ctx.tmp("usable")
        ctx.emit(f"{u} = call i64 @malloc_usable_size(ptr {s})")
        gen.declare_raw("@malloc_usable_size", USABLE_DECL)
        nbytes = u
    gen.zero_memory(ctx.emit, s, nbytes)


def defer_free(ctx, p, s, dealloc="@free"):
    """Free primal block p and its shadow s when the gradient ends (with its tape)."""
    ctx.gen().helpers.add(("tape",))
    ctx.gen().declare_raw(dealloc, f"declare void {dealloc}(ptr)")
    ctx.emit(f"call void @__enzyme_cc_defer_free(ptr %ad.tape, ptr {p}, ptr {s}, ptr {dealloc})")
