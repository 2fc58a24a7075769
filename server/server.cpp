// placeholder until the server lands
