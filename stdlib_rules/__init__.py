"""Declarative derivative rules (TOML) shipped with enzyme-cc; format in docs/rules.md."""
