// placeholder until the client lands
