"""Tournaments on the server (docs/tournaments.md, "Running a tournament").

* :mod:`.shapes`: a tournament's rows as the pure rules (``sahrat.tournaments``) read
  them: its plan, its entrants, the results of its tables so far.
* :mod:`.tables`: a round's table opened, its players seated, bots in the rest; and
  a finished table's result read from its match.
* :mod:`.steps`: one step of a tournament, whatever its state: start (or cancel),
  seat the next round, open its tables, read the finished ones, the result, the prizes.
* :mod:`.runner`: every process's loop, carrying on each tournament whose lease it
  takes, and making the schedules' system tournaments.
* :mod:`.service`: what the REST API asks: make, register, withdraw, complain, cancel,
  decide a complaint, the schedules.
* :mod:`.views`: a tournament as the REST API shows it.
"""
