"""The visible tests of the exercises, one module per notebook (``check("N.M")`` runs them).

``BUILDS_ON`` says which earlier exercises each exercise's reference answer
calls: 4.2's rules call 4.1's ``MySumTo``. ``check()`` names such an
earlier exercise when it fails its own tests, and no other. A test keeps
the map in step with the solution notebooks.
"""

BUILDS_ON = {
    "1.2": ("1.1",),  # MySquare
    "2.2": ("2.1",),  # topo_order
    "2.3": ("2.1",),  # topo_order
    "4.2": ("4.1",),  # MySumTo, my_sum_to
    "6.2": ("6.1",),  # MySoftmax
    "7.3": ("7.1",),  # vjp
    "8.2": ("8.1",),  # derivatives
}

# the exercises of lessons 13 to 16
BUILDS_ON.update({
    "13.2": ("13.1",),  # numerical_gradient
    "14.2": ("14.1",),  # MyCheckpoint
})
