"""The three phases of an order's life a fault can hit: its first provision, a rotation (``spec.passwordGeneration``
raised) and its teardown. Each says how to get to the phase, what starts it, and when it is over."""
from dataclasses import dataclass
from typing import Callable

from .world import World

READY_TIMEOUT = 240


class PrepareFailed(RuntimeError):
    """The order did not reach the phase's starting point without any fault: nothing can be concluded."""


def _ready_first(world: World) -> None:
    world.create_order(world.key)
    if not world.driver.drive(lambda: world.converged(world.key), READY_TIMEOUT):
        last = world.driver.records[-1] if world.driver.records else None
        raise PrepareFailed("the order did not become Ready before the phase (no fault yet); last pass: "
                            f"{last.summary(world.key[1], world.key[2], world.key[0]) if last else None} "
                            f"{last.msg if last else ''}")


def _create_bystander(world: World) -> None:
    if world.bystander:
        world.create_order(world.bystander)


def _bystander_done(world: World) -> bool:
    return world.bystander is None or world.converged(world.bystander)


def _provision_act(world: World) -> None:
    world.create_order(world.key)
    _create_bystander(world)


def _rotation_act(world: World) -> None:
    world.bump_generation(world.key)
    _create_bystander(world)


def _teardown_act(world: World) -> None:
    world.delete_order(world.key)
    _create_bystander(world)


@dataclass(frozen=True)
class Phase:
    name: str
    prepare: Callable[[World], None]
    act: Callable[[World], None]
    done: Callable[[World], bool]


PHASES = {
    "provision": Phase("provision", lambda w: None, _provision_act,
                       lambda w: w.converged(w.key, 1) and _bystander_done(w)),
    "rotation": Phase("rotation", _ready_first, _rotation_act,
                      lambda w: w.converged(w.key, w.target_generation) and _bystander_done(w)),
    "teardown": Phase("teardown", _ready_first, _teardown_act,
                      lambda w: w.torn_down(w.key) and _bystander_done(w)),
}
