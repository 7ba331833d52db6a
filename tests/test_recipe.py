import math

import pytest

from pipeline.core.recipe import loss_floor, lr_shape, smoothed_target


def test_schedule_rises_linearly_to_one_at_warmup():
    assert lr_shape(1, 100) == pytest.approx(0.01)
    assert lr_shape(50, 100) == pytest.approx(0.5)
    assert lr_shape(100, 100) == pytest.approx(1.0)


def test_schedule_decays_as_inverse_square_root_after_warmup():
    assert lr_shape(400, 100) == pytest.approx(0.5)
    assert lr_shape(1200, 100) == pytest.approx(math.sqrt(100 / 1200))
    assert lr_shape(1200, 100) < lr_shape(600, 100) < lr_shape(101, 100) < 1.0


def test_schedule_rejects_step_zero():
    with pytest.raises(ValueError):
        lr_shape(0, 100)


def test_loss_floor_matches_lesson_10():
    correct, other = smoothed_target(0.1, 11)
    assert round(correct, 3) == 0.909 and round(other, 4) == 0.0091
    floor, from_correct, from_others = loss_floor(0.1, 11)
    assert round(floor, 3) == 0.514
    assert round(from_correct, 3) == 0.087 and round(from_others, 3) == 0.427


def test_loss_floor_is_zero_without_smoothing():
    assert loss_floor(0.0, 11)[0] == 0.0
