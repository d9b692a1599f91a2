console.log('b')
