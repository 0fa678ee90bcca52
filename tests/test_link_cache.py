"""The link cache (enzyme_cc/cache.py): bounded by ENZYME_CC_CACHE_SIZE with least recently
used entries removed first (once a link has stored its entries), writes atomic, a vanished entry a miss, and the old unbounded AD
objects swept once."""
import os
import time

from enzyme_cc import cache


def _entry(tmp_path, name, size):
    src = tmp_path / "src"
    src.write_bytes(os.urandom(size))
    cache.store(name, str(src))


def test_least_recently_used_go_first(tmp_path, monkeypatch):
    monkeypatch.setenv("ENZYME_CC_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setenv("ENZYME_CC_CACHE", "1")
    monkeypatch.setenv("ENZYME_CC_CACHE_SIZE", str(100 / 1024))     # 100 KiB
    link = tmp_path / "c" / "link"
    for k in range(4):                       # 4 x 20 KiB: under the cap
        _entry(tmp_path, f"e{k}", 20 << 10)
        t = time.time() - 100 + k            # e0 oldest
        os.utime(link / f"e{k}", (t, t))
    assert cache.fetch("e0", str(tmp_path / "out"))       # e0 used: now the newest
    assert (tmp_path / "out").stat().st_size == 20 << 10
    _entry(tmp_path, "e4", 30 << 10)         # 110 KiB > cap: down to 3/4 of it (75 KiB)
    cache.trim()
    left = sorted(p.name for p in link.iterdir())
    assert left == ["e0", "e3", "e4"], left
    assert not cache.fetch("e1", str(tmp_path / "out"))


def test_disabled_cache_neither_reads_nor_writes(tmp_path, monkeypatch):
    monkeypatch.setenv("ENZYME_CC_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setenv("ENZYME_CC_CACHE", "0")
    _entry(tmp_path, "x", 10)
    assert not (tmp_path / "c").exists()
    assert not cache.fetch("x", str(tmp_path / "out"))


def test_old_unbounded_entries_are_swept(tmp_path, monkeypatch):
    root = tmp_path / "c"
    root.mkdir()
    old = "ab" * 32
    (root / f"{old}.o").write_bytes(b"x")
    (root / f"{old}.o.native").write_text("")
    (root / "enzyme-attributes-0123.so").write_bytes(b"plugin")     # other caches stay
    monkeypatch.setenv("ENZYME_CC_CACHE_DIR", str(root))
    monkeypatch.setenv("ENZYME_CC_CACHE", "1")
    _entry(tmp_path, "new", 10)
    assert sorted(p.name for p in root.iterdir()) == ["enzyme-attributes-0123.so", "link"]
    assert [p.name for p in (root / "link").iterdir()] == ["new"]


def test_code_digest_kept_beside_its_fingerprint(tmp_path, monkeypatch):
    """enzyme-cc's own code digest (in every AD cache key) is kept in the cache folder with a
    fingerprint of the sources' names, sizes and times: a memo whose fingerprint matches is
    read instead of hashing the sources again, one that does not is replaced."""
    from enzyme_cc.lto import link
    monkeypatch.setenv("ENZYME_CC_CACHE_DIR", str(tmp_path))
    link._code_digest.cache_clear()
    real = link._code_digest()
    memo = tmp_path / "code-digest"
    fingerprint, digest = memo.read_text().split()
    assert bytes.fromhex(digest) == real
    memo.write_text(f"{fingerprint} {'ab' * 32}\n")        # the fingerprint matches: trusted
    link._code_digest.cache_clear()
    assert link._code_digest() == bytes.fromhex("ab" * 32)
    memo.write_text(f"{'cd' * 32} {'ab' * 32}\n")          # the sources changed: hashed again
    link._code_digest.cache_clear()
    assert link._code_digest() == real
    assert memo.read_text().split() == [fingerprint, real.hex()]
    link._code_digest.cache_clear()
