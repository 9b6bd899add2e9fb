"""The provider boundary: the only modules of jury that import litellm (the import contract keeps it
so). litellm is imported lazily, inside the functions that call it (setup.import_litellm), so
importing any of them stays fast and offline.

- setup: litellm imported once per process, offline and quiet; the capped response session;
- prices: a call's price before and after it, batch-rate prices;
- params: the request's reply token cap, structured output and unknown params;
- batch_bodies: a batch's reply as a synchronous response;
- pool: ``JurorPool``, the calls themselves.
"""
