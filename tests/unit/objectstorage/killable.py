"""The in-memory world (world.py) checked after every action the edge carries out, with the pass killed before its
n-th action: how the scheduled-rotation tests (test_rotation_schedule.py, test_root_rotation_schedule.py) prove
that a pass killed at any step of two rotations still ends where an unkilled run does."""
from __future__ import annotations

from typing import Callable, Dict, List, Optional, Tuple

from .world import Killed, World


class Watched(World):
    """``check()`` runs after every action; ``kill_at`` kills the pass before its n-th action from ``count``.
    ``first_seen`` and ``gone_at`` are for ``check()`` to fill: when a key was first carried, when it stopped
    working."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0
        self.kill_at: Optional[int] = None
        self.broken: List[str] = []
        self.first_seen: Dict[str, object] = {}
        self.gone_at: Dict[str, object] = {}

    def _apply(self, action):
        self.count += 1
        if self.kill_at is not None and self.count == self.kill_at:
            raise Killed()
        error = super()._apply(action)
        self.check()
        return error

    def check(self) -> None:
        """What must hold after every action."""


def settle(world: World, done: Callable[[], bool], describe: Callable[[], object], passes: int = 200,
           seconds: float = 30) -> None:
    """Passes ``seconds`` apart until ``done()``; AssertionError naming ``describe()`` when ``passes`` are not
    enough."""
    for _ in range(passes):
        world.step(seconds)
        if done():
            return
    raise AssertionError(f"not done within {passes} passes: {describe()}")


Start = Callable[[Watched], None]
Rotate = Callable[[Watched], str]


def actions_of_two_rotations(make: Callable[[], Watched], start: Start, rotate_once: Rotate) -> int:
    """How many actions two rotations take when nothing is killed: the kill points to try."""
    world = make()
    start(world)
    world.count = 0
    rotate_once(world)
    rotate_once(world)
    return world.count


def two_rotations_killed_at(make: Callable[[], Watched], start: Start, rotate_once: Rotate,
                            carried: Callable[[Watched], str], kill_at: int) -> Tuple[Watched, List[str]]:
    """Two rotations with the pass killed before action ``kill_at``; the world and the three keys it carried."""
    world = make()
    start(world)
    world.count, world.kill_at = 0, kill_at
    keys = [carried(world)]
    for _ in range(2):
        rotate_once(world)
        keys.append(carried(world))
    return world, keys


def a_rotation_whose_issue_died(make: Callable[[], Watched], start: Start, rotate_once: Rotate) -> Watched:
    """One rotation whose first new key the gateway created while the pass died before keeping it; asserts that
    the key was revoked as an interrupted issue's and that nothing broke meanwhile."""
    world = make()
    start(world)
    world.die_after_issue = 1
    rotate_once(world)
    assert "InterruptedKeyRevoked" in [r for _n, r, _m in world.events]
    assert not world.violations and not world.broken, world.violations + world.broken
    return world
