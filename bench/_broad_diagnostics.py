"""What one crawl of bench/broad.py measures besides its own stats: the garbage collector's
work by generation (always), and the diagnostics that environment variables switch on
(listed in bench/broad.py's docstring). Each diagnostic slows the crawl down: its CPU
figures are not comparable with a plain run's.
"""

from __future__ import annotations

import gc
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy import signals

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.crawler import Crawler


class Diagnostics:
    """Installed on a crawler before it runs; :meth:`results` adds what they saw to its stats."""

    def __init__(self, crawler: Crawler, log_file: str):
        self.crawler = crawler
        self.log_file = log_file
        # Time spent in garbage collection, by generation (gc.callbacks: start and stop).
        self.gc_seconds = [0.0, 0.0, 0.0]
        self._gc_started = 0.0
        gc.callbacks.append(self._time_gc)
        # BROAD_GC_BALLAST=<n>: n tracked objects kept for the whole crawl, as a heap of parsed
        # robots.txt files would be (the collector runs a full collection when the objects
        # promoted since the last exceed a quarter of those that survived it).
        self.ballast: list[list[Any]] = [[] for _ in range(int(os.environ.get("BROAD_GC_BALLAST", "0")))]
        for variable, install in (
            ("BROAD_TRACEMALLOC", self._tracemalloc),
            ("BROAD_GC_PROMOTED", self._promoted),
            ("BROAD_GC_GARBAGE", self._garbage),
            ("BROAD_GC_HEAP", self._heap),
            ("BROAD_GC_SAMPLES", self._samples),
        ):
            if path := os.environ.get(variable):
                install(Path(path))
        self.profiler = None
        if profile := os.environ.get("BROAD_PROFILE"):  # a directory: each crawl's cProfile dump there
            import cProfile

            self.profile_dir = Path(profile)
            self.profiler = cProfile.Profile()

    def start(self) -> None:
        if self.profiler is not None:
            self.profiler.enable()

    def stop(self) -> None:
        if self.profiler is not None:
            self.profiler.disable()
            self.profiler.dump_stats(str(self.profile_dir / (Path(self.log_file).stem + ".prof")))

    def results(self, stats: dict[str, Any]) -> None:
        stats["gc/ballast"] = len(self.ballast)
        # The garbage collector's work, by generation: the full collections (2) are the costly ones.
        for generation, counts in enumerate(gc.get_stats()):
            stats[f"gc/collections/{generation}"] = counts["collections"]
            stats[f"gc/seconds/{generation}"] = round(self.gc_seconds[generation], 3)

    def _time_gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_started = time.process_time()
        else:
            self.gc_seconds[info["generation"]] += time.process_time() - self._gc_started

    def _at_close(self, write: Callable[[], None]) -> None:
        self.crawler.signals.connect(write, signal=signals.spider_closed, weak=False)

    def _tracemalloc(self, path: Path) -> None:
        """What is still allocated at the close."""
        import tracemalloc

        tracemalloc.start()
        self._at_close(
            lambda: path.write_text("\n".join(map(str, tracemalloc.take_snapshot().statistics("lineno")[:40])))
        )

    def _promoted(self, path: Path) -> None:
        """What reached generation 2, by type. Each collection of generation 1 moves its
        survivors to the end of generation 2's list: they count towards the next full
        collection (the 25 % rule) even if freed before it. Counted as they land."""
        promoted: Counter[str] = Counter()
        young = [0]

        def count(phase: str, info: dict[str, int]) -> None:
            if info["generation"] != 1:
                return
            if phase == "start":
                young[0] = len(gc.get_objects(generation=0)) + len(gc.get_objects(generation=1))
                return
            landed = young[0] - info["collected"]
            if landed > 0:
                promoted.update(gc_label(o) for o in gc.get_objects(generation=2)[-landed:])
                promoted["(total)"] += landed

        gc.callbacks.append(count)
        self._at_close(lambda: _write_counts(path, promoted, 400))

    def _garbage(self, path: Path) -> None:
        """The objects left in reference cycles, by type. An object freed by its reference
        count gives back what its allocation counted towards the next young collection; one
        in a cycle waits for a collection. With the collector off and DEBUG_SAVEALL, one
        collection at the close finds every cycle made."""
        gc.disable()
        gc.set_debug(gc.DEBUG_SAVEALL)

        def write() -> None:
            found = gc.collect()
            kinds = Counter(gc_label(o) for o in gc.garbage)
            kinds["(total)"] = found
            _write_counts(path, kinds, 80)
            gc.garbage.clear()

        self._at_close(write)

    def _heap(self, path: Path) -> None:
        """The objects the collector tracks at the close (what each full collection walks), by type."""

        def write() -> None:
            gc.collect()
            kinds = Counter(gc_label(o) for o in gc.get_objects())
            kinds["(total)"] = sum(kinds.values())
            _write_counts(path, kinds, 60)

        self._at_close(write)

    def _samples(self, path: Path) -> None:
        """The Python stack where each young collection starts, by function: the allocation
        that crossed the threshold, a sample of where tracked objects are made (one in
        about 700; biased where a crawl's allocations repeat a pattern)."""
        inclusive: Counter[str] = Counter()
        leaf: Counter[str] = Counter()

        def sample(phase: str, info: dict[str, int]) -> None:
            if phase != "start" or info["generation"] != 0:
                return
            frame = sys._getframe().f_back  # None when the collection starts from C alone
            if frame is None:
                return
            leaf[_frame_name(frame)] += 1
            seen = set()
            while frame is not None:
                seen.add(_frame_name(frame))
                frame = frame.f_back
            inclusive.update(seen)
            inclusive["(samples)"] += 1

        gc.callbacks.append(sample)

        def write() -> None:
            lines = ["inclusive:"] + [f"{n:8d} {name}" for name, n in inclusive.most_common(120)]
            lines += ["leaf:"] + [f"{n:8d} {name}" for name, n in leaf.most_common(60)]
            path.write_text("\n".join(lines))

        self._at_close(write)


def gc_label(o: Any) -> str:
    """What an object the collector tracks is, finely enough to find where it comes from."""
    kind = type(o).__qualname__
    try:
        if kind == "coroutine":
            return f"coroutine {o.cr_code.co_qualname}"
        if kind in ("function", "cell") and hasattr(o, "__qualname__"):
            return f"function {o.__qualname__}"
        if kind == "method":
            return f"method {o.__func__.__qualname__}"
        if kind == "frame":
            return f"frame {o.f_code.co_qualname}"
        # Not a tuple's or a list's items: one being built is tracked already, its items NULL.
        if kind in ("tuple", "list"):
            return f"{kind}[{len(o)}]"
    except Exception:
        pass
    return kind


def _frame_name(frame: Any) -> str:
    return f"{frame.f_code.co_qualname} ({Path(frame.f_code.co_filename).name})"


def _write_counts(path: Path, counts: Counter[str], top: int) -> None:
    path.write_text("\n".join(f"{count:10d} {name}" for name, count in counts.most_common(top)))
