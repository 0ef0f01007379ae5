ch14-next-character --steps 50 --heads 2 --seed 7
