"""Where the reverse sweep gets each primal value it needs: recomputed, reloaded, taped once per
loop or per iteration."""
