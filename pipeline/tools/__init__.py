"""Tools run by hand: the speed benchmark, the pin's cost, sorting with a model, the CI verdict."""
