# Objects of a user class kept by a class attribute (issue 13).
N = 300


class Connection:
    pool = []

    def __init__(self, n):
        self.n = n
        payload = bytes(3000)  # SITE:payload
        self.payload = payload


for i in range(N):
    Connection.pool.append(Connection(i))
