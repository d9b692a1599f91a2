; benchy 0.2mm PLA
G28
G1 Z0.2 F3000
