"""c5c3.orders controller: runs the ``c5c3.orders.reconcile`` pass through ansible-runner, sleeps until the
earliest requeue any order asked for, and wakes early on Kubernetes watch events.

Start it with ``make controller`` or ``PYTHONPATH=controller python -m c5c3_orders_controller --help``;
see ``docs/controller.md``.
"""
__version__ = "0.3.0"
