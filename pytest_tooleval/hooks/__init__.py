"""What pytest calls: the plugin's hooks, collection, the controller and the xdist glue."""
