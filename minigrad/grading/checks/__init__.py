"""The visible tests of the exercises, one module per notebook (``check("N.M")`` runs them).

Exercises are numbered after the lesson they pair with: ``exNN_name.py`` tests the exercises
of ``exercises/NN_name.ipynb``, which pairs with lesson NN, and its exercises are NN.1, NN.2, ...

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
    "5.4": ("5.3",),  # MySoftmax
    "6.3": ("6.1",),  # vjp
    "7.2": ("7.1",),  # derivatives
}

# the exercises of lessons 13 to 16
BUILDS_ON.update({
    "15.2": ("15.1",),  # numerical_gradient
    "16.2": ("16.1",),  # MyCheckpoint
})
