"""The live cluster: kubesched talking to a Kubernetes API server.

All I/O of ``kubesched run`` lives here: the connection (kubeconfig, in-cluster),
the async API client, informers, the ClusterClient that binds and reports, the event
broadcaster, leader election and the health and metrics endpoints. It feeds the same
scheduler the simulator feeds.
"""
