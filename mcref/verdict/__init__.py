"""The verdict flow: :func:`mcref.validate` and what it is made of (docs/architecture.md).

============================  ==================================================================
module                        holds
============================  ==================================================================
``_validate``                 :func:`mcref.validate`: check, prepare, bootstrap, references, rows
``_rounds``                   the sequential rounds of the Monte Carlo tests (one stream per D)
``_sequential``               the confidence sequences that decide a round's p against α
``_scale_test``               the scale tests (bootstrap-t and the t(ν̂) reference)
``_joint``                    the joint verdict over every row (min-p, leave-one-out ranks)
``_equivalence``              the equivalence margins (``tolerance=``)
``_budget``                   validate's default budgets (``default_n_mc``, ``default_n_boot``)
``_table``                    :class:`mcref.ValidationTable`, the result (text, JSON, CSV)
============================  ==================================================================

Nothing is re-exported here: the public names live on the package face (``mcref.validate``,
``mcref.ValidationTable``, ``mcref.default_n_mc``, ...).
"""
