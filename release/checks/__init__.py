"""One check per artifact role; the order they run in is checks/order.py. Each parses its files into
ctx.parsed and records problems; what is specific to a kind of release comes from release/kinds/."""
