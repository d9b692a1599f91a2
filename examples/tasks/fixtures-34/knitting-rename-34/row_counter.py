# knitting row counter: pos is the current row
pos = 0
pos_max = 120
purpose = "scarf"
for stitch in range(pos_max):
    pos += 1
    if pos % 10 == 0:
        print(purpose, pos)
# post a photo when pos reaches pos_max
