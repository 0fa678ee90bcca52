"""libstdc++ `std::vector`s held by a file-scope global (`static std::vector<double> work;`
grown where short): their shadows at a derivative's entry.

A vector's three pointers (start, finish, end of storage) are set inside libstdc++'s members,
which take the global's address, so `shared_globals.heap_slots` cannot prove what its slots
hold. The type says it instead: clang names the vector's implementation after its element and
allocator, and with `std::allocator` the start is null or a block of `operator new`, and the
other two point into it or one past it. Where the primal vector holds a block on entry, its
shadow gets a zeroed block of the same capacity from `operator new` with the same size and end,
so that a derivative through memory the vector held before it started finds a shadow there
(it was a null shadow, and such a derivative faulted). The next derivative's entry gives the
block (or the one a derivative grew it into) back with `operator delete`
(shared_globals._free_shadow_buffer).
"""
from __future__ import annotations


def shadow_vector(gen, g: str, sg: str, tmp) -> list[str]:
    """The shadow vector at sg of the primal one at g (both constant addresses): a zeroed block
    of the primal's capacity, with the primal's size, where the primal holds a block."""
    gen.declare_raw("@_Znwm", "declare noalias ptr @_Znwm(i64)")
    start, end, cap, none, used, total, buf = (tmp() for _ in range(7))
    label = tmp()[2:]
    yes, done = f"vec.alloc.{label}", f"vec.done.{label}"
    field = [f"getelementptr (i8, ptr {x}, i64 {k})" for x in (g, sg) for k in (8, 16)]
    out = [f"{start} = load ptr, ptr {g}", f"{none} = icmp eq ptr {start}, null",
           f"br i1 {none}, label %{done}, label %{yes}", f"{yes}:",
           f"{end} = load ptr, ptr {field[0]}", f"{cap} = load ptr, ptr {field[1]}",
           f"{used} = ptrtoint ptr {end} to i64", f"{total} = ptrtoint ptr {cap} to i64"]
    s, n_used, n_total, s_end, s_cap = (tmp() for _ in range(5))
    out += [f"{s} = ptrtoint ptr {start} to i64", f"{n_used} = sub i64 {used}, {s}",
            f"{n_total} = sub i64 {total}, {s}",
            f"{buf} = call ptr @_Znwm(i64 {n_total})"]
    gen.zero_memory(out.append, buf, n_total)
    return out + [f"{s_end} = getelementptr i8, ptr {buf}, i64 {n_used}",
                  f"{s_cap} = getelementptr i8, ptr {buf}, i64 {n_total}",
                  f"store ptr {buf}, ptr {sg}", f"store ptr {s_end}, ptr {field[2]}",
                  f"store ptr {s_cap}, ptr {field[3]}", f"br label %{done}", f"{done}:"]
