"""The visible tests of the exercises, one module per notebook (``check("N.M")`` runs them).

``BUILDS_ON`` says which earlier exercises each exercise's reference answer
calls: 3.2's rules call 3.1's ``MySumTo``. ``check()`` names such an
earlier exercise when it fails its own tests, and no other. A test keeps
the map in step with the solution notebooks.
"""

BUILDS_ON = {
    "1.2": ("1.1",),  # MySquare
    "3.2": ("3.1",),  # MySumTo, my_sum_to
    "5.2": ("5.1",),  # topo_order
    "5.3": ("5.1",),  # topo_order
    "6.3": ("6.1",),  # vjp
    "7.2": ("7.1",),  # derivatives
    "8.2": ("8.1",),  # MySoftmax
}

# the exercises of lessons 13 to 16
BUILDS_ON.update({
    "13.2": ("13.1",),  # numerical_gradient
    "14.2": ("14.1",),  # MyCheckpoint
})
